# A class folder without images keeps its label, and the terminal says so (issue 38).
mkdir src/n09999999_empty
run shardpack pack src out --no-sync
