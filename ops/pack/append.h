// shardpack append's steps (ops/pack/append.cc), for Append and for a SampleWriter that appends
// (WriterOptions::append, ops/pack/sample_writer.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/common/pack_input.h"
#include "ground/dataset_lock.h"
#include "shardpack/env.h"
#include "shardpack/manifest.h"
#include "shardpack/pack.h"
#include "shardpack/status.h"

namespace shardpack {

struct AppendTarget {
  std::string out;      // the dataset's folder, or its s3:// URL
  std::string staging;  // where the new shards are packed: out/.append; for a URL a local folder
  Manifest dataset;     // its manifest before the append
  // What the append runs with: the options given, and the dataset's for those not given
  // (PackOptions::append_given).
  PackOptions options;
  // The staging folder holds an append that was killed while it published (its shards complete).
  bool publish_only = false;
  // What reads and writes OUT: the caller's Env for a folder; for a dataset in an object store
  // the Env that uploads into it (the new shards are uploaded from the local staging folder, the
  // manifest last). Held here when OpenAppendTarget made it.
  Env* out_env = nullptr;
  std::shared_ptr<Env> out_env_holder;
  bool remote = false;
  bool for_writer = false;  // a SampleWriter's: no source to record as the generation's last_append
  // The dataset folder's writer lock (ground/dataset_lock.h), held from before its manifest is read
  // until the target is gone: one run at a time adds to a dataset. Empty for an object store.
  std::shared_ptr<DatasetFolderLock> lock;
};

// Everything an append checks before it writes a byte: OUT a local folder (or an s3:// URL) holding a wds or raw
// dataset, its manifest sound, `options` its own (InvalidArgument naming the first that differs).
// Takes the folder's writer lock first (refused, naming the holder, while another run holds it);
// `what` says what this run is, for that message.
// An interrupted append in OUT is refused unless options.resume continues it; a writer
// (`for_writer`) cannot continue one and is always refused, with the ways out.
Status OpenAppendTarget(Env* env, const std::string& out, const PackOptions& options, bool for_writer,
                        const std::string& what, AppendTarget* target);

// The dataset's classes, then those of `classes` it lacks, in their order: an appending writer's
// class list (an int label indexes it).
std::vector<std::string> AppendedClassList(const Manifest& dataset, const std::vector<std::string>& classes);

// Publishes the append target.publish_only says was killed while it published.
Status FinishInterruptedAppend(Env* env, const AppendTarget& target, PackResult* result);

// Packs `input` (labelled in the dataset's class list as extended) into target.staging, then
// moves its shards into OUT and writes the new manifest last. `source` names the input in messages.
// On failure the staged shards stay for --resume, or go with `discard_on_failure` (a writer's,
// which nothing can resume); the dataset is unchanged either way.
Status PackAppend(Env* env, PackInput* input, const std::string& source, const PackOptions& options,
                  const AppendTarget& target, bool discard_on_failure, PackResult* result);

}  // namespace shardpack
