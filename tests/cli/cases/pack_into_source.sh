# OUT inside SRC would pack its own output: refused, and nothing left behind.
run shardpack pack src src/n01440764/packed
[[ ! -e src/n01440764/packed ]] || fail "pack_into_source left src/n01440764/packed behind"
