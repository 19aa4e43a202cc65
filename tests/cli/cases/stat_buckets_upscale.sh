# stat --buckets says when buckets enlarge the images (small images into SDXL's 1024-pixel buckets):
# how many, by how much, and what to do (docs/buckets.md).
setup pack src out --samples-per-shard 5
run shardpack stat out --buckets 1024x768,768x1024,1024x1024
