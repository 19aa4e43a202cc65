# A crop without a width.
run shardpack pack src out --format raw --crop 224x
