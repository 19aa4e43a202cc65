// The report page (`shardpack report`, docs/report.md): one self-contained HTML file that draws
// itself from the report's JSON, embedded in it. No network, no script from elsewhere: inline SVG
// drawn by the page's own script, thumbnails as data: URIs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace shardpack {

// The page for `report` (the object `report --json` prints): the JSON goes in verbatim, with every
// "<" written "\u003c" so that no name in it can end the script element that holds it.
std::string ReportPage(const nlohmann::json& report);

}  // namespace shardpack
