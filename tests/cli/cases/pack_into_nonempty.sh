# A second pack into a finished dataset needs --force (or --resume).
setup pack src out --samples-per-shard 5
run shardpack pack src out
