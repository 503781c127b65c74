#pragma once
// The RunControl of a run served elsewhere (RemoteSource): every verb is a kvscope.v1.Control call
// on the source's connection, with its bearer token, so the console drives a served run with the
// same vocabulary as one in this process. Nothing blocks: knob and policy results come back through
// `done` on a gRPC thread; a refused pause, resume, speed or seek shows in the source's status.
#include <map>
#include <string>

#include "core/run/RunControl.h"

namespace kvscope {

class RemoteSource;

class RemoteRunControl final : public RunControl {
 public:
  explicit RemoteRunControl(RemoteSource& source) : source_(source) {}

  // Offered: the server refuses what its run cannot do (a replay's knobs), and the refusal, with the
  // server's message, reaches `done`.
  bool canChangeKnobs() const override { return true; }
  void applyKnobs(std::map<std::string, double> changes, ChangeAuthor author, Done done) override;
  void setPolicy(std::string name, ChangeAuthor author, Done done) override;

  void pause(ChangeAuthor author) override;
  void resume(ChangeAuthor author) override;
  void setSpeed(double speed, ChangeAuthor author) override;

  // The protocol does not say whether a run is a replay: seek is offered until the server refuses
  // one as FAILED_PRECONDITION (a live run). Asynchronous: true once sent (`error` cleared); false
  // with the server's message after such a refusal.
  bool canSeek() const override;
  bool seek(SimTime time, ChangeAuthor author, std::string* error) override;
  SimTime endTime() const override { return 0; }  // State carries no end time

  // As the stream and the GetState poll last showed them.
  bool paused() const override;
  double speed() const override;
  SimTime simTime() const override;

 private:
  RemoteSource& source_;
};

}  // namespace kvscope
