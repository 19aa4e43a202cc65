# subset of the dataset the pack case writes: one class, as a view (docs/views.md).
setup pack src out --samples-per-shard 5
run shardpack subset out fish --classes n01440764
