// `kvscope-cli scenarios` and `kvscope-cli policies`.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/RoutingPolicy.h"
#include "core/scenario/Scenario.h"

namespace kvscope::cli {

Command addScenarios(CLI::App& app) {
  auto* sub = app.add_subcommand("scenarios", "List the bundled scenarios with their description");
  return [sub] {
    (void)sub;
    for (const auto& name : Scenario::bundledNames()) {
      const Scenario s = Scenario::load(name);
      std::printf("%-22s %s\n", name.c_str(), s.description.c_str());
    }
    return 0;
  };
}

Command addPolicies(CLI::App& app) {
  auto* sub = app.add_subcommand("policies", "List the routing policies with their knobs, ranges and defaults");
  auto format = std::make_shared<std::string>("table");
  sub->add_option("--format", *format, "table or json")->check(CLI::IsMember({"table", "json"}));
  return [format] {
    nlohmann::json j = nlohmann::json::array();
    for (auto policy : policyNames()) {
      nlohmann::json p{{"policy", policy}, {"knobs", nlohmann::json::array()}};
      if (*format == "table") std::printf("%s\n", std::string(policy).c_str());
      for (const auto& k : KnobRegistry::specs()) {
        const bool own = k.policies.find(policy) != std::string_view::npos;
        if (!own) continue;
        p["knobs"].push_back({{"name", k.name}, {"unit", k.unit}, {"min", k.min}, {"max", k.max},
                              {"default", k.default_value}, {"description", k.description}});
        if (*format == "table")
          std::printf("  %-22s default %-8g range [%g, %g] %s\n      %s\n", std::string(k.name).c_str(), k.default_value,
                      k.min, k.max, std::string(k.unit).c_str(), std::string(k.description).c_str());
      }
      j.push_back(p);
    }
    if (*format == "table") {
      std::printf("\nevery policy (admission and cluster knobs)\n");
      for (const auto& k : KnobRegistry::specs())
        if (k.policies == "all")
          std::printf("  %-28s default %-8g range [%g, %g] %s\n      %s\n", std::string(k.name).c_str(), k.default_value,
                      k.min, k.max, std::string(k.unit).c_str(), std::string(k.description).c_str());
    } else {
      nlohmann::json shared = nlohmann::json::array();
      for (const auto& k : KnobRegistry::specs())
        if (k.policies == "all")
          shared.push_back({{"name", k.name}, {"unit", k.unit}, {"min", k.min}, {"max", k.max},
                            {"default", k.default_value}, {"description", k.description}});
      std::printf("%s\n", nlohmann::json{{"policies", j}, {"shared_knobs", shared}}.dump(2).c_str());
    }
    return 0;
  };
}

}  // namespace kvscope::cli
