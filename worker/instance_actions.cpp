// instance_actions.cpp — the rule of instance_actions.hpp, next to the
// store's own checks it mirrors (extension/sql/40_instances.sql: cancel,
// _run_again; 68_events.sql: emit; engine/redrive.cpp: redrive).
#include "instance_actions.hpp"

#include <algorithm>

namespace genroc {

namespace {

std::string text(const nlohmann::json &inst, const char *key) {
	auto it = inst.find(key);
	return it != inst.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool ended(const std::string &status) {
	return status == "succeeded" || status == "failed" || status == "cancelled";
}

std::string id_of(const nlohmann::json &inst) {
	auto it = inst.find("id");
	return it != inst.end() && it->is_number_integer() ? std::to_string(it->get<int64_t>()) : "?";
}

}  // namespace

const std::vector<std::string> &action_names() {
	static const std::vector<std::string> names = {"cancel", "retry", "resume", "redrive", "emit"};
	return names;
}

std::string action_refusal(const std::string &action, const nlohmann::json &inst, const std::string &state_type) {
	const std::string status = text(inst, "status");
	const std::string id = id_of(inst);
	if (action == "cancel" || action == "emit") {
		if (ended(status)) return "instance " + id + " has already ended (" + status + ")";
		if (action == "emit" && (status != "waiting" || text(inst, "wait_kind") != "event"))
			return "instance " + id + " does not wait for an event";
		return "";
	}
	if (action == "retry" || action == "resume") {
		auto parent = inst.find("parent_id");
		if (parent != inst.end() && !parent->is_null()) {
			auto root = inst.find("root_id");
			const std::string top = root != inst.end() && root->is_number_integer()
										? std::to_string(root->get<int64_t>()) : "?";
			return "instance " + id + " is part of instance " + top + ": retry or resume that one";
		}
		if (status != "failed")
			return "instance " + id + " is " + status + ", not failed: only a failed instance can be retried or resumed";
		if (action == "resume" && state_type != "Task")
			return "instance " + id + " failed in state \"" + text(inst, "state") + "\", a " +
				   (state_type.empty() ? "?" : state_type) + " state: resume goes on after a Task only";
		return "";
	}
	if (action == "redrive") {
		auto parent = inst.find("parent_id");
		if (parent != inst.end() && !parent->is_null()) {
			auto root = inst.find("root_id");
			const std::string top = root != inst.end() && root->is_number_integer()
										? std::to_string(root->get<int64_t>()) : "?";
			return "instance " + id + " is part of instance " + top + ": redrive that one";
		}
		if (status != "failed" && status != "cancelled")
			return "instance " + id + " is " + status +
				   ": only an instance that failed, timed out or was cancelled can be redriven";
		return "";
	}
	return "unknown action \"" + action + "\"";
}

std::vector<std::string> instance_actions(const nlohmann::json &inst, const std::string &state_type) {
	std::vector<std::string> out;
	for (const auto &a : action_names())
		if (action_refusal(a, inst, state_type).empty()) out.push_back(a);
	return out;
}

}  // namespace genroc
