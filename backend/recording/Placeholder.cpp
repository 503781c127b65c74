#include "kvscope/v1/placeholder.pb.h"
#include "kvscope/v1/placeholder.grpc.pb.h"
int kvscopeBackendPlaceholder() { kvscope::v1::Placeholder p; return p.x(); }
