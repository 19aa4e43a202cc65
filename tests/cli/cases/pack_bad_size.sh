# A shard size with an unknown unit.
run shardpack pack src out --shard-size 12XB
