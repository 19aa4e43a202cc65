# refresh after an append: each side of a split takes the appended samples its rule puts there
# (docs/views.md); the counts add up to what was appended.
setup pack src out --samples-per-shard 5
"$shardpack" split out val train --fraction 0.3 --seed 1 >/dev/null
setup append out src
run shardpack refresh val train
