// A request's shape (RouteDecision::shape, what RecordingWorkload replays) to and from its message:
// kept apart from EventConvert.cpp, whose encoders and decoders call these two.
#include "backend/convert/ConvertSupport.h"

namespace kvscope::convert {

void shapeToProto(const RequestShape& in, v1::RequestShape* out) {
  out->set_input_tokens(in.input_tokens);
  if (in.output_tokens >= 0) out->set_output_tokens(in.output_tokens);
  if (in.trace_time >= 0) out->set_trace_time_us(in.trace_time);
  if (in.think >= 0) out->set_think_us(in.think);
  out->set_session_turns(in.session_turns);
  if (in.due_start >= 0) out->set_due_start_us(in.due_start);
  const PromptLayout& l = in.prompt;
  if (l.input_tokens <= 0) return;
  auto* p = out->mutable_prompt();
  p->set_input_tokens(l.input_tokens);
  p->set_shared_prefix_tokens(l.shared_prefix_tokens);
  p->set_shared_scope(l.shared_scope);
  p->set_session_scope(l.session_scope);
  p->set_source_block_size(l.source_block_size);
  p->mutable_source_hashes()->Add(l.source_hashes.begin(), l.source_hashes.end());
  p->set_unique_scope(l.unique_scope);
}

// A request's shape, checked: sizes in range, a prompt no longer than its input, source hashes that
// fit the prompt (one per source block, at most what the input holds).
bool shapeFromProto(const v1::RequestShape& in, RequestShape* out, std::string* error) {
  constexpr std::int64_t kMaxTokens = 100'000'000;
  if (in.input_tokens() < 0 || in.input_tokens() > kMaxTokens)
    return fail(error, "input_tokens: ", in.input_tokens(), ", expected 0 to ", kMaxTokens);
  out->input_tokens = in.input_tokens();
  if (in.has_output_tokens() && (in.output_tokens() < 0 || in.output_tokens() > kMaxTokens))
    return fail(error, "output_tokens: ", in.output_tokens(), ", expected 0 to ", kMaxTokens);
  out->output_tokens = in.has_output_tokens() ? in.output_tokens() : -1;
  if (in.has_trace_time_us() && in.trace_time_us() < 0)
    return fail(error, "trace_time_us: ", in.trace_time_us(), ", expected >= 0");
  out->trace_time = in.has_trace_time_us() ? in.trace_time_us() : -1;
  if (in.has_think_us() && in.think_us() < 0) return fail(error, "think_us: ", in.think_us(), ", expected >= 0");
  out->think = in.has_think_us() ? in.think_us() : -1;
  if (in.session_turns() < 0 || in.session_turns() > 1'000'000)
    return fail(error, "session_turns: ", in.session_turns(), ", expected 0 to 1000000");
  out->session_turns = in.session_turns();
  if (in.has_due_start_us() && in.due_start_us() < 0)
    return fail(error, "due_start_us: ", in.due_start_us(), ", expected >= 0");
  out->due_start = in.has_due_start_us() ? in.due_start_us() : -1;
  if (!in.has_prompt()) return true;
  const v1::PromptLayout& p = in.prompt();
  PromptLayout& l = out->prompt;
  if (p.input_tokens() < 0 || p.input_tokens() > in.input_tokens())
    return fail(error, "prompt.input_tokens: ", p.input_tokens(), ", expected 0 to the input's ", in.input_tokens());
  if (p.shared_prefix_tokens() < 0 || p.shared_prefix_tokens() > p.input_tokens())
    return fail(error, "prompt.shared_prefix_tokens: ", p.shared_prefix_tokens(), ", expected 0 to ", p.input_tokens());
  if (p.source_block_size() < 0 || p.source_block_size() > 1'000'000)
    return fail(error, "prompt.source_block_size: ", p.source_block_size(), ", expected 0 to 1000000");
  const std::int64_t most = p.source_block_size() > 0 ? p.input_tokens() / p.source_block_size() + 1 : 0;
  if (p.source_hashes_size() > most)
    return fail(error, "prompt.source_hashes: ", p.source_hashes_size(), " ids, at most ", most,
                " for its input and block size");
  l.input_tokens = p.input_tokens();
  l.shared_prefix_tokens = p.shared_prefix_tokens();
  l.shared_scope = p.shared_scope();
  l.session_scope = p.session_scope();
  l.source_block_size = p.source_block_size();
  l.source_hashes.assign(p.source_hashes().begin(), p.source_hashes().end());
  l.unique_scope = p.unique_scope();
  return true;
}

}  // namespace kvscope::convert
