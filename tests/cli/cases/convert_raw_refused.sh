# A raw dataset holds no encoded images to convert.
setup pack src raw --format raw --resize 20 --crop 16x12 --compress zstd --chunk-samples 4
run shardpack convert raw again
