# WebDataset shards into an LMDB environment.
setup pack src out --samples-per-shard 5
run shardpack convert out lmdb --format lmdb --no-sync
