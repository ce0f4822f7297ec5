// jsonata_cli.cpp — genroc's JSONata evaluator on a batch of cases, for the
// differential test against the reference (difftest.js).  Reads a JSON array
// of {"expr", "input"?, "bindings"?} from the file named by argv[1] (or
// stdin) and writes a JSON array of answers, one per case, in order:
//   {"value": v}  {"undefined": true}  {"error": "T2001", "message": "..."}

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "jsonata.hpp"

using genroc::jsonata::json;

int main(int argc, char **argv) {
	std::string text;
	if (argc > 1) {
		std::ifstream f(argv[1]);
		text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
	} else {
		text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
	}
	json cases = json::parse(text);
	json out = json::array();
	for (const auto &c : cases) {
		json answer;
		try {
			auto expr = genroc::jsonata::compile(c.at("expr").get<std::string>());
			genroc::jsonata::Environment env;
			env.now_ms = c.value("now_ms", int64_t{0});
			if (c.contains("bindings"))
				for (auto it = c["bindings"].begin(); it != c["bindings"].end(); ++it)
					env.vars[it.key()] = it.value();
			const json *input = c.contains("input") ? &c["input"] : nullptr;
			auto r = genroc::jsonata::evaluate(*expr, input, env);
			if (r)
				answer["value"] = *r;
			else
				answer["undefined"] = true;
		} catch (const genroc::jsonata::JsonataError &e) {
			answer["error"] = e.code;
			answer["message"] = e.what();
		}
		out.push_back(answer);
	}
	std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
	return 0;
}
