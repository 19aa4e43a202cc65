# A mixture's weight that is not a number is refused before anything is opened, naming the source.
setup pack src out --samples-per-shard 5
run shardpack bench --source out 1 --source out heavy --crop 16
