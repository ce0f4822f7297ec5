// step_fuzz.cpp — libFuzzer target: fuzzed payloads (an instance input, a
// task result, a state input, a child's outputs) into one step of a fixed
// set of definitions that use every data-handling feature (paths, filters,
// Parameters, intrinsics, ResultSelector, ResultPath, Choice, Map).
//
// Input: byte 0 picks the definition, byte 1 the operation; the rest is the
// payload as JSON text.  An answer must serialize and stay within the JSON
// depth limit (plus the answer's own few levels); anything else aborts.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "asl.hpp"
#include "limits.hpp"

using genroc::json;
namespace asl = genroc::asl;

namespace {

const char *const kDefinitions[] = {
	R"j({"StartAt":"P","States":{
	  "P":{"Type":"Pass","Parameters":{"a.$":"$.a","all.$":"$..x","f.$":"$.items[?(@.n > 1 || @.s == 'x')]",
	       "j.$":"States.JsonToString($)","m.$":"States.JsonMerge($, $, true)"},"ResultPath":"$.p","Next":"T"},
	  "T":{"Type":"Task","Resource":"handler:h","ResultSelector":{"r.$":"$","len.$":"States.ArrayLength(States.Array($, $))"},
	       "ResultPath":"$.t.r","Retry":[{"ErrorEquals":["States.TaskFailed"],"MaxAttempts":2}],
	       "Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.err","Next":"C"}],"Next":"C"},
	  "C":{"Type":"Choice","Choices":[
	        {"And":[{"Variable":"$.a","IsPresent":true},{"Not":{"Variable":"$.a","IsNumeric":true}}],"Next":"S"},
	        {"Variable":"$.a","NumericGreaterThanPath":"$.b","Next":"S"},
	        {"Variable":"$.s","StringMatches":"a*b\\*","Next":"F"}],"Default":"S"},
	  "F":{"Type":"Fail","ErrorPath":"$.s","CausePath":"States.Format('{}', $.s)"},
	  "S":{"Type":"Succeed","OutputPath":"$.t"}}})j",
	R"j({"StartAt":"M","States":{
	  "M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"v.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index",
	       "s.$":"States.StringToJson(States.JsonToString($$.Map.Item.Value))"},
	       "ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"Next":"W"},
	  "W":{"Type":"Wait","SecondsPath":"$[0].v","Next":"E"},
	  "E":{"Type":"Pass","Parameters":{"h.$":"States.Hash(States.JsonToString($), 'SHA-256')",
	       "p.$":"States.ArrayPartition($, 2)","u.$":"States.ArrayUnique($)"},"End":true}}})j",
	R"j({"StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"genroc:call.sync","Parameters":{"Definition":"d","Input.$":"$"},
	       "TimeoutSecondsPath":"$.timeout","Next":"P"},
	  "P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}],
	       "ResultSelector":{"first.$":"$[0]","deep.$":"$..*"},"Next":"S"},
	  "S":{"Type":"Pass","Parameters":{"x.$":"States.StringToJson($.first.s)","sp.$":"States.StringSplit($.first.s, ',')",
	       "b.$":"States.Base64Decode(States.Base64Encode($.first.s))"},"End":true}}})j",
};

const std::vector<asl::DefinitionPtr> &definitions() {
	static const std::vector<asl::DefinitionPtr> defs = [] {
		std::vector<asl::DefinitionPtr> v;
		for (const char *d : kDefinitions)
			v.push_back(asl::compile(json::parse(d)));
		return v;
	}();
	return defs;
}

// The state each operation resumes, per definition.
const char *kTaskState[] = {"T", "M", "T"};
const char *kFanState[] = {"M", "M", "P"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	if (size < 2)
		return 0;
	const size_t which = data[0] % std::size(kDefinitions);
	const int op = data[1] % 5;
	json payload = json::parse(reinterpret_cast<const char *>(data + 2),
							   reinterpret_cast<const char *>(data + size), nullptr, false);
	if (payload.is_discarded())
		return 0;
	json req = {{"now_ms", 1000000}, {"context", {{"Execution", {{"Id", "1"}}}}}};
	switch (op) {
	case 0:
		req["op"] = "start";
		req["input"] = std::move(payload);
		break;
	case 1:
		req["op"] = "task_succeeded";
		req["state"] = kTaskState[which];
		req["state_input"] = json::object();
		req["result"] = std::move(payload);
		break;
	case 2:
		req["op"] = "children_done";
		req["state"] = kFanState[which];
		req["state_input"] = json::object();
		req["outputs"] = payload.is_array() ? std::move(payload) : json::array({payload});
		break;
	case 3:
		req["op"] = "enter";
		req["state"] = which == 0 ? "C" : which == 1 ? "E" : "S";
		req["state_input"] = std::move(payload);
		break;
	default:
		req["op"] = "task_failed";
		req["state"] = kTaskState[which];
		req["state_input"] = std::move(payload);
		req["error"] = "States.TaskFailed";
		req["cause"] = "fuzz";
		break;
	}
	try {
		json answer = asl::step(*definitions()[which], req);
		if (!genroc::limits::within_depth(answer, genroc::limits::JSON_DEPTH + 4))
			std::abort();  // a step built data past the limit
		(void)answer.dump(-1, ' ', false, json::error_handler_t::replace);
	} catch (const genroc::Error &) {
		// refused: a clean error is an answer too
	}
	return 0;
}
