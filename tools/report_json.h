// Machine-readable (--json) forms of pack, verify, stat, bench and doctor results. Field names are stable;
// docs/cli.md lists them.
#pragma once

#include <nlohmann/json.hpp>

#include "shardpack/doctor.h"
#include "shardpack/loader_bench.h"
#include "shardpack/pack.h"
#include "shardpack/stat.h"
#include "shardpack/verify.h"

namespace shardpack {

nlohmann::json PackResultToJson(const PackResult& result, const std::string& out);
nlohmann::json VerifyReportToJson(const VerifyReport& report);
nlohmann::json DatasetStatsToJson(const DatasetStats& stats);
nlohmann::json BenchResultToJson(const BenchResult& result);
nlohmann::json DoctorReportToJson(const DoctorReport& report);

}  // namespace shardpack
