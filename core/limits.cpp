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
std::atomic<int (*)(void)> g_interrupt_check{nullptr};
thread_local Budget t_budget;
thread_local size_t t_depth = 0;

// One array or object on the way down, and where the walk is inside it.  No
// strings on the way: the path is spelled only when the limit is passed.
struct Frame {
	const json *node;
	json::const_iterator next;	// the next child to visit
	json::const_iterator cur;	// the child being visited (valid below the top)
	size_t next_index;			// next's index (arrays)
	size_t cur_index;			// cur's index
};

// How `parent` reaches the child at `it` / `index`: ".name", "['x y']", "[3]".
std::string step_to(const json &parent, const json::const_iterator &it, size_t index) {
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
	if (limit == 0) {
		if (where)
			*where = root;
		return false;
	}
	std::vector<Frame> stack;
	stack.push_back({&v, v.cbegin(), v.cend(), 0, 0});
	while (!stack.empty()) {
		Frame &top = stack.back();
		// Scalars cost nothing but the loop; an array or object goes down.
		while (top.next != top.node->cend() && !top.next->is_structured()) {
			++top.next;
			++top.next_index;
		}
		if (top.next == top.node->cend()) {
			stack.pop_back();
			continue;
		}
		top.cur = top.next++;
		top.cur_index = top.next_index++;
		const json &child = *top.cur;
		if (stack.size() == limit) {  // the child is one level too many
			if (where) {
				*where = root;
				for (size_t i = 0; i < stack.size() && i < kShownSteps; i++)
					*where += step_to(*stack[i].node, stack[i].cur, stack[i].cur_index);
				if (stack.size() > kShownSteps)
					*where += "...";
			}
			return false;
		}
		stack.push_back({&child, child.cbegin(), child.cend(), 0, 0});  // `top` may dangle now
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

Interrupted::Interrupted()
	: Error("57014", "canceling the ASL interpreter: the server asked it to stop",
			"A query cancel, a statement timeout or the end of the backend.") {}

BudgetExceeded::BudgetExceeded(const std::string &message)
	: Error(PROGRAM_LIMIT_EXCEEDED, message) {}

void set_interrupt_check(int (*pending)(void)) { g_interrupt_check.store(pending); }

Budget &budget() { return t_budget; }

void Budget::settle() {
	next_poll = ticks + kPollTicks;
	int (*pending)(void) = g_interrupt_check.load(std::memory_order_relaxed);
	if (pending && pending())
		throw Interrupted();
	if (open == 0) {  // no step: nothing is charged
		work = 0;
		bytes = 0;
		return;
	}
	// Past the budget the step stays past it: what handles the error (a
	// Catch's expressions) fails as soon as it works too.
	if (work > STEP_WORK) {
		throw BudgetExceeded("the step did more than " + std::to_string(STEP_WORK) +
							 " units of work over data" + named("step_work"));
	}
	if (bytes > STEP_BYTES) {
		throw BudgetExceeded("the step built more than " + std::to_string(STEP_BYTES) +
							 " bytes of strings, arrays and objects" + named("step_bytes"));
	}
}

BudgetScope::BudgetScope() {
	if (t_budget.open++ == 0) {
		t_budget.work = 0;
		t_budget.bytes = 0;
	}
}

BudgetScope::~BudgetScope() { t_budget.open--; }

}  // namespace genroc::limits
