# A folder of images is not a dataset.
run shardpack verify src
