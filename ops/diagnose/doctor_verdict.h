// The verdict of `shardpack doctor`: from the measured figures of a DoctorReport, the layers in
// order, the rate the pipeline feeds today, the bottleneck, and the actions that would help, each
// with its measured or (labelled) estimated effect. Pure arithmetic on the report: no I/O, so it is
// tested on reports built by hand as well as on real runs.
#pragma once

#include "shardpack/doctor.h"

namespace shardpack {

void DrawVerdict(const DoctorOptions& options, DoctorReport* report);

}  // namespace shardpack
