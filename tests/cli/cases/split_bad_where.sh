# split with a --where term that names no column: refused, naming the flag and the columns.
setup pack src out --samples-per-shard 5
run shardpack split out a b --where "depth > 3"
