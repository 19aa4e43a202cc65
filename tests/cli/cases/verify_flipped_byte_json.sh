# The same damage, reported as JSON.
setup pack src out --samples-per-shard 5
flip_byte_in_second_image
run shardpack verify out --json
