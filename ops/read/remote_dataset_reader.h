// Reading a dataset at a URL at the reader's pace: the small files (manifest, indexes, sample
// tables) are fetched when it opens, each shard when it is first read or, with a plan
// (DatasetReader::PlanReads, which the loader gives), ahead of that (RemoteShardStore).
//
// Cached mode (a cache folder in RemoteOptions) keeps the files in the
// folder; streaming mode (no folder, and a reader that goes front to back: RemoteOptions::
// sequential) keeps them in memory. A format whose reader cannot open shards through an Env
// (LMDB) is downloaded whole into the cache first, and needs one.
#pragma once

#include <memory>
#include <string>

#include "shardpack/dataset_reader.h"
#include "shardpack/env.h"
#include "shardpack/remote_options.h"
#include "shardpack/status.h"
#include "storage/location.h"
#include "storage/remote_shard_store.h"

namespace shardpack {

// InvalidArgument naming the fixes when there is no cache folder and the reads are random (or the
// format needs its files on disk); the errors of FetchRemoteManifest otherwise.
Status OpenRemoteDatasetReader(const Location& location, Env* env, const RemoteOptions& options,
                               std::unique_ptr<DatasetReader>* reader);
// A shard list of URLs ("https://host/train-{000000..000127}.tar") without a cache folder, for a
// reader that goes front to back (options.sequential; InvalidArgument naming the fixes otherwise):
// each shard is streamed through memory once when it opens, to index its tar headers, and again
// as the reads reach it.
Status OpenStreamedShardList(const Location& spec, Env* env, const RemoteOptions& options,
                             std::unique_ptr<DatasetReader>* reader);
// As above, with every HTTP client from new_client (the HttpClient seam, for tests).
Status OpenRemoteDatasetReader(const Location& location, Env* env, const RemoteOptions& options,
                               RemoteShardStore::NewClient new_client, std::unique_ptr<DatasetReader>* reader);

}  // namespace shardpack
