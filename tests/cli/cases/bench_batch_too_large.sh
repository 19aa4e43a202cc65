# Buckets and a batch whose buffers would not fit: refused at open naming the options (it was an
# uncaught std::bad_alloc), exit 1.
setup pack src out --samples-per-shard 5
run shardpack bench out --buckets 65536x65536 --batch 4 --seconds 1
