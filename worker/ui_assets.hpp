// ui_assets.hpp — the web console's files (web/dist/), compiled into the binary.
//
// The source that defines ui_assets() is generated at build time by
// scripts/embed-ui.cmake from the committed web/dist/ (web/README.md: how
// that folder is built from web/src/).  http_api.cpp serves them under /ui/.
#pragma once

#include <cstddef>
#include <vector>

namespace genroc {

struct UiAsset {
	const char *name;		   // the path under /ui/, e.g. "app.js"
	const char *type;		   // its media type
	const unsigned char *data;
	size_t size;
};

// Every file of the console, by name.
const std::vector<UiAsset> &ui_assets();

}  // namespace genroc
