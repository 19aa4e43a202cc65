# verify of the LMDB environment convert writes.
setup pack src out --samples-per-shard 5
setup convert out lmdb --format lmdb
run shardpack verify lmdb
