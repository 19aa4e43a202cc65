# raw: resized, cropped, zstd chunks of 4 images.
run shardpack pack src raw --format raw --resize 20 --crop 16x12 --compress zstd --chunk-samples 4 --no-sync --quiet
