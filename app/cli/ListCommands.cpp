// `kvscope-cli scenarios` and `kvscope-cli policies`.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/cli/CliCommands.h"
#include "core/knobs/KnobRegistry.h"
#include "core/router/PolicyRegistry.h"
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
    const auto knobJson = [](const KnobSpec& k) {
      return nlohmann::json{{"name", k.name},
                            {"unit", k.unit},
                            {"min", k.min},
                            {"max", k.max},
                            {"default", k.default_value},
                            {"description", k.description}};
    };
    const auto printKnob = [](const KnobSpec& k, int width) {
      std::printf("  %-*s default %-8g range [%g, %g] %s\n      %s\n", width, std::string(k.name).c_str(),
                  k.default_value, k.min, k.max, std::string(k.unit).c_str(), std::string(k.description).c_str());
    };
    const bool table = *format == "table";
    nlohmann::json j = nlohmann::json::array();
    for (const PolicySpec* policy : policySpecs()) {
      nlohmann::json p{{"policy", policy->name},
                       {"description", policy->description},
                       {"origin", policy->origin},
                       {"control", policy->control},
                       {"lower_is_better", policy->lower_is_better},
                       {"tie_break", policy->tie_break},
                       {"knobs", nlohmann::json::array()},
                       {"components", nlohmann::json::array()}};
      if (table)
        std::printf("%s\n  %s%s\n  from: %s\n", std::string(policy->name).c_str(), policy->control ? "[control] " : "",
                    std::string(policy->description).c_str(), std::string(policy->origin).c_str());
      for (KnobId id : policy->knobs) {
        p["knobs"].push_back(knobJson(KnobRegistry::spec(id)));
        if (table) printKnob(KnobRegistry::spec(id), 22);
      }
      for (const ScoreComponentSpec& c : policy->components)
        p["components"].push_back({{"name", c.name}, {"unit", c.unit}, {"description", c.help}});
      j.push_back(p);
    }
    if (table) {
      std::printf("\nevery policy (admission and cluster knobs)\n");
      for (const auto& k : KnobRegistry::specs())
        if (k.scope == KnobScope::Shared) printKnob(k, 28);
    } else {
      nlohmann::json shared = nlohmann::json::array();
      for (const auto& k : KnobRegistry::specs())
        if (k.scope == KnobScope::Shared) shared.push_back(knobJson(k));
      std::printf("%s\n", nlohmann::json{{"policies", j}, {"shared_knobs", shared}}.dump(2).c_str());
    }
    return 0;
  };
}

}  // namespace kvscope::cli
