# stat --top 1: the largest and the smallest class only.
setup pack src out --samples-per-shard 5
run shardpack stat out --top 1
