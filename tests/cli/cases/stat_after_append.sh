# stat names the folder as given and the generation that append messages and loader states cite;
# the append takes the dataset's own options (no flag given).
setup pack src out --samples-per-shard 5
setup append out src
run shardpack stat out
