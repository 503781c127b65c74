#include "app/gui/SourceFactory.h"

#include "backend/source/LiveClusterSource.h"
#include "backend/source/RecordingSource.h"
#include "backend/source/RemoteSource.h"
#include "core/model/Error.h"
#include "core/run/SimulationRun.h"
#include "core/source/EmbeddedSimulationSource.h"

namespace kvscope {

std::unique_ptr<Source> makeSource(const SourceSpec& spec) {
  switch (spec.kind) {
    case SourceSpec::Simulation: {
      SimulationOptions options;
      options.knobs = spec.knobs;
      options.seed = spec.seed;
      options.duration_s = spec.duration_s;
      return std::make_unique<EmbeddedSimulationSource>(spec.target, options, spec.speed);
    }
    case SourceSpec::Recording:
      return std::make_unique<RecordingSource>(spec.target, spec.speed);
    case SourceSpec::Remote:
      return std::make_unique<RemoteSource>(spec.target, spec.token_file, spec.tls, spec.tls_ca);
    case SourceSpec::Live:
      return std::make_unique<LiveClusterSource>(spec.target);
  }
  throw InputError("unknown source kind");
}

}  // namespace kvscope
