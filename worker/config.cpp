// config.cpp — derived settings (queues, host name); see config.hpp.
#include "config.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>

#include "digest.hpp"

namespace genroc {

std::vector<std::string> worker_queues(const Config &config,
									   const std::vector<std::string> &handler_queues) {
	std::set<std::string> qs;
	if (!config.exclusive) qs.insert("default");
	qs.insert(config.queues.begin(), config.queues.end());
	qs.insert(handler_queues.begin(), handler_queues.end());
	std::vector<std::string> out;
	for (auto &q : qs) out.push_back(config.region.empty() ? q : q + "." + config.region);
	return out;
}

std::string host_name() {
	char buf[HOST_NAME_MAX + 1] = {0};
	if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
	return buf;
}

std::string default_worker_id(const Config &config, const std::string &store) {
	const std::set<std::string> queues(config.queues.begin(), config.queues.end());
	std::string what = store + "\n" + config.command + "\nregion=" + config.region +
					   "\nexclusive=" + (config.exclusive ? "1" : "0") + "\nqueues=";
	for (auto &q : queues) what += q + ",";
	const auto hash = digest_hex(EVP_sha256(), what);
	if (!hash) return config.host;	// no digest (never seen): the host name alone
	return config.host + "-" + hash->substr(0, 8);
}

}  // namespace genroc
