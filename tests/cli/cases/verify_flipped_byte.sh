# One byte flipped inside the image of sample 000000001: verify names the sample, exit 1.
setup pack src out --samples-per-shard 5
flip_byte_in_second_image
run shardpack verify out
