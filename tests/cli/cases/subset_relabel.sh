# subset --classes --relabel: the view's classes labelled 0..N-1 in the dataset's order, the mapping
# printed (docs/views.md).
setup pack src out --samples-per-shard 5
run shardpack subset out two --classes n01456602,n01440764 --relabel
