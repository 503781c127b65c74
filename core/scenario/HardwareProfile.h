#pragma once
// Hardware and model constants of one worker type. Loaded from resources/profiles/*.json (data,
// not code: each constant there says where it comes from).
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace kvscope {

struct HardwareProfile {
  std::string name;
  double kv_bytes_per_token = 131072;
  long decode_kv_pool_tokens = 850000;
  long prefill_kv_pool_tokens = 850000;
  double prefill_tokens_per_s = 15000;
  double prefill_overhead_s = 0.02;
  // Attention: each prefilled token also costs this much per token of context before it, so a
  // chunk of c tokens after o tokens adds c x (o + c/2) x this (0: prefill linear in tokens).
  double prefill_per_context_token_s = 0;
  double decode_iteration_base_s = 0.006;
  double decode_iteration_per_request_s = 0.0002;
  double decode_iteration_per_context_token_s = 2.7e-8;
  long chunked_prefill_tokens = 8192;
  long max_running_requests = 256;
  double link_bandwidth_bytes_per_s = 20e9;
  double link_probe_interval_s = 10;
  double admission_rpc_s = 0.002;
  double worker_restart_s = 60;

  // Reads NAME from the profile directory (or a path to a .json file); throws InputError.
  static HardwareProfile load(const std::string& name_or_path);
  // Every constant under its file key, in the files' order (what `calibrate profile` and `calibrate
  // model` write, before their own record of how they got there).
  nlohmann::ordered_json toJson() const;
};

}  // namespace kvscope
