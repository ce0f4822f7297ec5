// limits.cpp — JSON depth without recursion, and the recursion guard (see
// limits.hpp).

#include "limits.hpp"

#include <atomic>
#include <vector>

namespace genroc::limits {

namespace {

// Steps of a path shown before it is cut short with "...".
constexpr size_t kShownSteps = 8;

std::atomic<int (*)(void)> g_stack_check{nullptr};
thread_local size_t t_depth = 0;

// One array or object on the way down, and where the walk is inside it.
struct Frame {
	const json *node;
	json::const_iterator it;
	size_t index;	   // the next element's index (arrays)
	std::string step;  // how its parent reaches it: ".name", "['x y']", "[3]"
};

std::string step_to(const json::const_iterator &it, const json &parent, size_t index) {
	if (!parent.is_object())
		return "[" + std::to_string(index) + "]";
	const std::string &key = it.key();
	bool plain = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
	for (char c : key)
		plain = plain && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
						  (c >= '0' && c <= '9') || c == '_');
	if (plain)
		return "." + key;
	std::string q = "['";
	for (char c : key) {
		if (c == '\'' || c == '\\')
			q += '\\';
		q += c;
	}
	return q + "']";
}

}  // namespace

std::string named(const char *name) { return std::string(" (limit ") + name + ")"; }

bool within_depth(const json &v, size_t limit, const std::string &root, std::string *where) {
	if (!v.is_structured())
		return true;
	std::vector<Frame> stack;
	stack.push_back({&v, v.cbegin(), 0, {}});
	while (!stack.empty()) {
		if (stack.size() > limit) {
			if (where) {
				*where = root;
				for (size_t i = 1; i < stack.size() && i <= kShownSteps; i++)
					*where += stack[i].step;
				if (stack.size() > kShownSteps + 1)
					*where += "...";
			}
			return false;
		}
		Frame &top = stack.back();
		if (top.it == top.node->cend()) {
			stack.pop_back();
			continue;
		}
		const json &child = *top.it;
		std::string step = step_to(top.it, *top.node, top.index);
		++top.it;
		++top.index;
		if (child.is_structured())
			stack.push_back({&child, child.cbegin(), 0, std::move(step)});
	}
	return true;
}

void check_json_depth(const json &v, const std::string &what) {
	std::string where;
	if (!within_depth(v, JSON_DEPTH, "$", &where))
		throw Error(PROGRAM_LIMIT_EXCEEDED, what + " nests deeper than " +
												std::to_string(JSON_DEPTH) +
												" levels of arrays and objects at " + where +
												named("json_depth"));
}

void check_definition_depth(const json &definition) {
	std::string where;
	if (!within_depth(definition, JSON_DEPTH, "$", &where))
		throw Error(PROGRAM_LIMIT_EXCEEDED,
					"invalid definition at " + where + ": nests deeper than " +
						std::to_string(JSON_DEPTH) + " levels of arrays and objects" +
						named("json_depth"));
}

void set_stack_check(int (*too_deep)(void)) { g_stack_check.store(too_deep); }

RecursionGuard::RecursionGuard() {
	if (t_depth >= RECURSION_DEPTH)
		throw Error(STACK_DEPTH_EXCEEDED,
					"the ASL interpreter recursed deeper than " + std::to_string(RECURSION_DEPTH) +
						" levels" + named("recursion_depth"));
	int (*check)(void) = g_stack_check.load(std::memory_order_relaxed);
	if (check && check())
		throw Error(STACK_DEPTH_EXCEEDED, "stack depth limit exceeded in the ASL interpreter",
					"The definition or the data nests too deeply for the server's "
					"max_stack_depth.");
	t_depth++;
}

RecursionGuard::~RecursionGuard() { t_depth--; }

}  // namespace genroc::limits
