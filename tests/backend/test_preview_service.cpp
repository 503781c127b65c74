// Control.Preview over a real gRPC server (KvscopeServer on 127.0.0.1:0) around a real paced simulation
// with its WhatIfForecaster, called through the generated C++ stubs and through RemoteSource (what
// the console uses): the served answer is the same fork the console would compute in-process, the run
// itself does not change, and every refusal names its reason.
#include <QtTest>

#include <future>

#include <grpcpp/grpcpp.h>

#include "backend/convert/PreviewConvert.h"
#include "backend/service/KvscopeServer.h"
#include "backend/service/PreviewQueue.h"
#include "backend/service/TelemetryHub.h"
#include "backend/source/RemoteSource.h"
#include "core/run/SimulationRun.h"
#include "core/run/SimulationRunner.h"
#include "core/run/WhatIfForecaster.h"
#include "kvscope/v1/control.grpc.pb.h"

using namespace kvscope;

namespace {

std::unique_ptr<grpc::ClientContext> call() {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return ctx;
}

v1::PreviewRequest previewOf(std::map<std::string, double> knobs, double horizon_s = 0, std::string policy = {}) {
  v1::PreviewRequest r;
  for (const auto& [name, value] : knobs) {
    auto* k = r.add_changes();
    k->set_name(name);
    k->set_value(value);
  }
  r.set_policy(std::move(policy));
  r.set_horizon_s(horizon_s);
  r.set_who("test");
  return r;
}

double share(const RunSummary& s, const char* worker) {
  for (const auto& w : s.workers)
    if (w.id == worker) return w.share;
  return -1;
}

QString text(const grpc::Status& s) {
  return QString::number(s.error_code()) + ": " + QString::fromStdString(s.error_message());
}

void compareSeries(const MinMaxSeries& a, const MinMaxSeries& b) {
  QCOMPARE(a.raw().size(), b.raw().size());
  for (std::size_t i = 0; i < a.raw().size(); ++i) {
    QCOMPARE(a.raw()[i].time, b.raw()[i].time);
    QCOMPARE(a.raw()[i].value, b.raw()[i].value);
    QCOMPARE(a.raw()[i].peak, b.raw()[i].peak);
  }
}

void compareFutures(const WhatIfFuture& served, const WhatIfFuture& local) {
  QCOMPARE(served.workers, local.workers);
  QCOMPARE(served.per_worker.size(), local.per_worker.size());
  for (const auto& [gauge, series] : local.per_worker) {
    QVERIFY2(served.per_worker.count(gauge), gauge.c_str());
    const std::vector<MinMaxSeries>& wire = served.per_worker.at(gauge);
    QCOMPARE(wire.size(), series.size());
    for (std::size_t w = 0; w < series.size(); ++w) compareSeries(wire[w], series[w]);
  }
  compareSeries(served.ttft, local.ttft);
  compareSeries(served.e2e, local.e2e);
  QCOMPARE(served.horizon.total, local.horizon.total);
  QCOMPARE(served.horizon.failed, local.horizon.failed);
  QCOMPARE(served.horizon.eviction_count, local.horizon.eviction_count);
  QCOMPARE(served.horizon.ttft_s.p90, local.horizon.ttft_s.p90);
  QCOMPARE(served.horizon.e2e_s.p90, local.horizon.e2e_s.p90);
  QCOMPARE(served.horizon.workers.size(), local.horizon.workers.size());
  for (std::size_t w = 0; w < served.horizon.workers.size(); ++w) {
    QCOMPARE(served.horizon.workers[w].id, local.horizon.workers[w].id);
    QCOMPARE(served.horizon.workers[w].bindings, local.horizon.workers[w].bindings);
    QCOMPARE(served.horizon.workers[w].share, local.horizon.workers[w].share);
  }
  QCOMPARE(served.error, local.error);
}

}  // namespace

class TestPreviewService : public QObject {
  Q_OBJECT
  std::unique_ptr<TelemetryHub> hub_;
  std::unique_ptr<WhatIfForecaster> forecaster_;
  std::unique_ptr<SimulationRunner> runner_;
  std::unique_ptr<KvscopeServer> server_;
  std::unique_ptr<v1::Control::Stub> stub_;

 private slots:
  void initTestCase() {
    // e2-cold-d: D2 gets no bindings while K is 0 and sessions still join; K=200 moves some there.
    PreparedRun run = prepareRun(Scenario::load("e2-cold-d"), SimulationOptions{});
    hub_ = std::make_unique<TelemetryHub>();
    forecaster_ = std::make_unique<WhatIfForecaster>(run);
    runner_ = std::make_unique<SimulationRunner>(run.scenario, run.workload,
                                                 std::vector<EventSink*>{forecaster_.get(), hub_.get()});
    runner_->start(40);
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    std::string error;
    server_ = KvscopeServer::start(options, *hub_, *runner_, &error, nullptr, forecaster_.get());
    QVERIFY2(server_, error.c_str());
    stub_ = v1::Control::NewStub(grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials()));
    QTRY_VERIFY_WITH_TIMEOUT(runner_->simTime() >= secondsToTime(40), 60000);
    runner_->pause("test");  // a fixed "now": the served fork and the local one start at the same place
  }

  void cleanupTestCase() {
    server_->shutdown();
    runner_->stop();
    runner_->waitFinished();
  }

  void servedPreviewIsTheForkTheConsoleWouldCompute() {
    v1::GetKnobsResponse before, after;
    QVERIFY(stub_->GetKnobs(call().get(), {}, &before).ok());
    v1::PreviewResponse response;
    const grpc::Status status = stub_->Preview(call().get(), previewOf({{"K", 200}}), &response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    WhatIfResult served;
    std::string error;
    QVERIFY2(fromProto(response, &served, &error), error.c_str());
    QCOMPARE(served.from, forecaster_->now());
    QCOMPARE(served.to, served.from + secondsToTime(600));  // horizon_s 0 = ten minutes
    QCOMPARE(served.with.workers, (std::vector<std::string>{"D0", "D1", "D2"}));
    QVERIFY(served.with.perWorker(WorkerGauge::KvFraction)->front().count() > 100);  // a snapshot a second
    QVERIFY2(
        share(served.with.horizon, "D2") > share(served.without.horizon, "D2") + 0.1,
        qPrintable(
            QStringLiteral("%1 vs %2").arg(share(served.with.horizon, "D2")).arg(share(served.without.horizon, "D2"))));
    // The same fork in this process, on the same history: the same numbers, sample for sample.
    ControlStep change{0, {{"K", 200}}, {}};
    const WhatIfResult local = WhatIfPreview(forecaster_->prepared(), forecaster_->history())
                                   .run(forecaster_->now(), secondsToTime(600), change);
    QCOMPARE(served.from, local.from);
    compareFutures(served.without, local.without);
    compareFutures(served.with, local.with);
    // The run itself did not change.
    QVERIFY(stub_->GetKnobs(call().get(), {}, &after).ok());
    QCOMPARE(after.SerializeAsString(), before.SerializeAsString());
  }

  void refusalsNameTheirReason_data() {
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    auto bytes = [](const v1::PreviewRequest& r) { return QByteArray::fromStdString(r.SerializeAsString()); };
    QTest::newRow("nothing to preview") << bytes(previewOf({})) << int(grpc::INVALID_ARGUMENT) << "both empty";
    QTest::newRow("knob out of range") << bytes(previewOf({{"rho", 7}})) << int(grpc::INVALID_ARGUMENT) << "changes[0]";
    QTest::newRow("unknown knob") << bytes(previewOf({{"no_such_knob", 1}})) << int(grpc::INVALID_ARGUMENT)
                                  << "no_such_knob";
    QTest::newRow("unknown policy") << bytes(previewOf({}, 0, "no-such-policy")) << int(grpc::INVALID_ARGUMENT)
                                    << "valid policies";
    QTest::newRow("horizon too long") << bytes(previewOf({{"K", 1}}, 3601)) << int(grpc::INVALID_ARGUMENT)
                                      << "horizon_s: 3601";
    QTest::newRow("horizon negative") << bytes(previewOf({{"K", 1}}, -5)) << int(grpc::INVALID_ARGUMENT) << "horizon_s";
    QTest::newRow("horizon NaN") << bytes(previewOf({{"K", 1}}, std::nan(""))) << int(grpc::INVALID_ARGUMENT)
                                 << "horizon_s";
  }
  void refusalsNameTheirReason() {
    QFETCH(QByteArray, request);
    QFETCH(int, code);
    QFETCH(QString, message);
    v1::PreviewRequest r;
    QVERIFY(r.ParseFromString(request.toStdString()));
    v1::PreviewResponse response;
    const grpc::Status status = stub_->Preview(call().get(), r, &response);
    QCOMPARE(int(status.error_code()), code);
    QVERIFY2(QString::fromStdString(status.error_message()).contains(message), qPrintable(text(status)));
  }

  // A policy alone is a change too, and one the run's own rules take.
  void aPolicyAloneIsPreviewed() {
    v1::PreviewResponse response;
    const grpc::Status status = stub_->Preview(call().get(), previewOf({}, 60, "linear"), &response);
    QVERIFY2(status.ok(), qPrintable(text(status)));
    QCOMPARE(response.to_us() - response.from_us(), secondsToTime(60));
    QVERIFY(response.changed().error().empty());
  }

  // Two wait at most: a burst of callers gets RESOURCE_EXHAUSTED beyond that, never a growing queue,
  // and every accepted one is answered.
  void aBurstBeyondTheQueueIsRefused() {
    constexpr int kCalls = 8;
    struct Call {
      grpc::ClientContext ctx;
      v1::PreviewResponse response;
      std::promise<grpc::Status> done;
    };
    std::vector<std::unique_ptr<Call>> calls;
    const v1::PreviewRequest request = previewOf({{"K", 200}}, 3600);
    for (int i = 0; i < kCalls; ++i) {
      calls.push_back(std::make_unique<Call>());
      Call* c = calls.back().get();
      c->ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
      stub_->async()->Preview(&c->ctx, &request, &c->response, [c](grpc::Status s) { c->done.set_value(s); });
    }
    int ok = 0, exhausted = 0;
    for (auto& c : calls) {
      const grpc::Status s = c->done.get_future().get();
      ok += s.ok();
      exhausted += s.error_code() == grpc::RESOURCE_EXHAUSTED;
      QVERIFY2(s.ok() || s.error_code() == grpc::RESOURCE_EXHAUSTED, qPrintable(text(s)));
    }
    QVERIFY2(exhausted >= 1 && ok >= int(PreviewQueue::kMaxWaiting),
             qPrintable(QStringLiteral("%1 ok, %2 refused").arg(ok).arg(exhausted)));
  }

  // A server around a run it cannot fork (here: no forecaster, as for a replay or a live cluster).
  void withoutAForecasterItIsAFailedPrecondition() {
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    std::string error;
    auto plain = KvscopeServer::start(options, *hub_, *runner_, &error);
    QVERIFY2(plain, error.c_str());
    auto stub = v1::Control::NewStub(grpc::CreateChannel(plain->address(), grpc::InsecureChannelCredentials()));
    v1::PreviewResponse response;
    const grpc::Status status = stub->Preview(call().get(), previewOf({{"K", 200}}), &response);
    QCOMPARE(status.error_code(), grpc::FAILED_PRECONDITION);
    QVERIFY2(status.error_message().find("only a simulation") != std::string::npos, qPrintable(text(status)));
    plain->shutdown();
  }

  // What the console does: RemoteSource asks, checks and rebuilds the futures.
  void remoteSourceRebuildsTheFutures() {
    RemoteSource source(server_->address());
    source.start();
    QVERIFY(source.capabilities().preview);
    std::promise<std::pair<std::shared_ptr<WhatIfResult>, std::string>> done;
    source.preview(ControlStep{0, {{"K", 200}}, {}}, secondsToTime(120), std::make_shared<std::atomic<bool>>(false),
                   [&](std::shared_ptr<WhatIfResult> r, std::string e) {
                     done.set_value({std::move(r), std::move(e)});
                   });
    auto [result, error] = done.get_future().get();
    QVERIFY2(result, error.c_str());
    QCOMPARE(result->to - result->from, secondsToTime(120));
    QCOMPARE(result->with.perWorker(WorkerGauge::ResidentSessions)->size(), std::size_t{3});
    source.stop();
  }

  // The answer comes from another process: a malformed one is refused with its field named.
  void malformedAnswersAreRefused() {
    WhatIfResult good;
    good.from = secondsToTime(10);
    good.to = secondsToTime(20);
    good.with.workers = {"D0"};
    std::vector<MinMaxSeries>& kv = good.with.per_worker["kv_fraction"];
    kv.emplace_back();
    good.with.per_worker["resident_sessions"].emplace_back();
    kv[0].add(secondsToTime(11), 0.5);
    kv[0].add(secondsToTime(12), 0.6);
    v1::PreviewResponse wire;
    toProto(good, &wire);
    WhatIfResult out;
    std::string error;
    QVERIFY2(fromProto(wire, &out, &error), error.c_str());
    compareFutures(out.with, good.with);

    auto refused = [&](v1::PreviewResponse bad, const char* field) {
      WhatIfResult untouched;
      untouched.from = 42;
      std::string why;
      if (fromProto(bad, &untouched, &why)) return QStringLiteral("accepted");
      if (untouched.from != 42) return QStringLiteral("changed the output");
      return QString::fromStdString(why).contains(field) ? QString() : QString::fromStdString(why);
    };
    v1::PreviewResponse back = wire;
    // per_worker is written in key order: [0] kv_fraction, [1] resident_sessions.
    back.mutable_changed()->mutable_per_worker(0)->mutable_workers(0)->set_time_us(1, secondsToTime(5));
    QCOMPARE(refused(back, "changed.per_worker[0].workers[0].time_us[1]"), QString());
    v1::PreviewResponse late = wire;
    late.mutable_changed()->mutable_per_worker(0)->mutable_workers(0)->set_time_us(1, secondsToTime(21));
    QCOMPARE(refused(late, "after the horizon"), QString());
    v1::PreviewResponse ragged = wire;
    ragged.mutable_changed()->mutable_per_worker(0)->mutable_workers(0)->add_value(0.1f);
    QCOMPARE(refused(ragged, "changed.per_worker[0].workers[0]"), QString());
    v1::PreviewResponse nan = wire;
    nan.mutable_changed()->mutable_per_worker(0)->mutable_workers(0)->set_value(0, std::nanf(""));
    QCOMPARE(refused(nan, "not a finite number"), QString());
    v1::PreviewResponse missing = wire;
    missing.mutable_changed()->mutable_per_worker(1)->clear_workers();
    QCOMPARE(refused(missing, "changed.per_worker[1]: 0 series for 1 workers"), QString());
    v1::PreviewResponse twice = wire;
    *twice.mutable_changed()->add_per_worker() = twice.changed().per_worker(0);
    QCOMPARE(refused(twice, "'kv_fraction' comes twice"), QString());
    // A gauge this console does not know (a newer server's) is skipped, not refused.
    v1::PreviewResponse newer = wire;
    newer.mutable_changed()->add_per_worker()->set_gauge("gpu_temperature");
    QVERIFY2(fromProto(newer, &out, &error), error.c_str());
    QCOMPARE(out.with.per_worker.size(), std::size_t{2});
    v1::PreviewResponse span = wire;
    span.set_to_us(span.from_us() - 1);
    QCOMPARE(refused(span, "from_us/to_us"), QString());
  }
};

QTEST_GUILESS_MAIN(TestPreviewService)
#include "test_preview_service.moc"
