// SlurmExecutor without Slurm: a fake CommandRunner answers as sbatch, squeue and sacct do. The
// runs are dealt round robin to the array's tasks, the script asks for that array with the options
// given and runs this sweep's tasks, sbatch's job id is parsed and recorded, a missing sbatch says
// what to install, squeue's and sacct's lines (ranges too) give each run its state, and the sweep
// file the tasks read parses back to the same sweep.
#include <QtTest>

#include <QTemporaryDir>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/io/AtomicFile.h"
#include "core/model/Error.h"
#include "core/sweep/SlurmExecutor.h"
#include "core/sweep/SweepFile.h"
#include "core/sweep/SweepRunner.h"

using namespace kvscope;
namespace fs = std::filesystem;

namespace {

// Answers by program name; records every call.
class FakeCommands : public CommandRunner {
 public:
  std::map<std::string, std::function<CommandResult(const std::vector<std::string>&)>> programs;
  std::vector<std::vector<std::string>> calls;

  CommandResult run(const std::vector<std::string>& argv) override {
    calls.push_back(argv);
    const auto p = programs.find(argv[0]);
    if (p == programs.end()) return CommandResult{};  // not found
    return p->second(argv);
  }
};

CommandResult answer(int code, std::string out, std::string err = "") {
  return CommandResult{true, code, std::move(out), std::move(err)};
}

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

class TestSlurmExecutor : public QObject {
  Q_OBJECT
 private slots:
  void sharesDealRunsRoundRobin() {
    const auto s = SlurmExecutor::shares({0, 1, 2, 3, 4, 5, 6}, 3);
    QCOMPARE(s.size(), std::size_t(3));
    QCOMPARE(s[0], (std::vector<std::size_t>{0, 3, 6}));
    QCOMPARE(s[1], (std::vector<std::size_t>{1, 4}));
    QCOMPARE(s[2], (std::vector<std::size_t>{2, 5}));
    // Never an empty task: fewer runs than tasks gives one task per run.
    QCOMPARE(SlurmExecutor::shares({4, 9}, 100).size(), std::size_t(2));
    QCOMPARE(SlurmExecutor::shares({4, 9}, 0).size(), std::size_t(1));
  }

  void scriptAsksForTheArrayAndRunsTheTasks() {
    SlurmOptions o;
    o.partition = "cpu";
    o.time = "2:00:00";
    o.cpus_per_task = 4;
    const std::string s = SlurmExecutor::script(o, "/opt/kv scope/kvscope-cli", "/shared/my sweep", 2, 5);
    QVERIFY(s.rfind("#!/bin/bash\n", 0) == 0);
    QVERIFY(s.find("#SBATCH --array=0-4\n") != std::string::npos);
    QVERIFY(s.find("#SBATCH --cpus-per-task=4\n") != std::string::npos);
    QVERIFY(s.find("#SBATCH --partition=cpu\n") != std::string::npos);
    QVERIFY(s.find("#SBATCH --time=2:00:00\n") != std::string::npos);
    QVERIFY(s.find("#SBATCH --chdir=\"/shared/my sweep\"\n") != std::string::npos);
    QVERIFY(s.find("#SBATCH --output=\"/shared/my sweep/slurm/submit-2-%a.log\"\n") != std::string::npos);
    QVERIFY(s.find("exec '/opt/kv scope/kvscope-cli' sweep --run-task '/shared/my sweep' --submission 2 "
                   "--task-index \"$SLURM_ARRAY_TASK_ID\" --jobs \"${SLURM_CPUS_PER_TASK:-4}\" "
                   "${SLURM_RESTART_COUNT:+--resume}\n") != std::string::npos);
    // Every #SBATCH line before the first command, or sbatch ignores it.
    QVERIFY(s.rfind("#SBATCH") < s.find("\nexec "));
    // Without a partition or time limit the cluster's defaults apply: no such line.
    const std::string plain = SlurmExecutor::script(SlurmOptions{}, "/x/kvscope-cli", "/d", 1, 1);
    QVERIFY(plain.find("--partition") == std::string::npos && plain.find("--time") == std::string::npos);
    QVERIFY(plain.find("#SBATCH --array=0-0\n") != std::string::npos);
    // A first submission's task redoes its share, unless Slurm requeued it after a lost node.
    QVERIFY(plain.find("}\" ${SLURM_RESTART_COUNT:+--resume}\n") != std::string::npos);
    QVERIFY(plain.find("#SBATCH --open-mode=append\n") != std::string::npos);
    // A resumed submission's tasks skip what is done (a requeued task does not redo its share).
    QVERIFY(SlurmExecutor::script(SlurmOptions{}, "/x/kvscope-cli", "/d", 3, 1, true).find("}\" --resume\n") !=
            std::string::npos);
    // A quote in a path stays one shell word.
    QVERIFY(SlurmExecutor::script(SlurmOptions{}, "/x/it's", "/d", 1, 1).find("exec '/x/it'\\''s' sweep") !=
            std::string::npos);
  }

  void parsesTheJobIdSbatchPrints() {
    QCOMPARE(SlurmExecutor::parseJobId("12345\n").value_or(""), std::string("12345"));
    QCOMPARE(SlurmExecutor::parseJobId("12345;west\n").value_or(""), std::string("12345"));
    QCOMPARE(SlurmExecutor::parseJobId("sbatch: warning: something\n678\n").value_or(""), std::string("678"));
    QVERIFY(!SlurmExecutor::parseJobId("Submitted batch job\n"));
    QVERIFY(!SlurmExecutor::parseJobId(""));
  }

  void parsesSqueueAndSacctLines() {
    const auto q =
        SlurmExecutor::parseTaskStates("12_0 RUNNING\n12_[2-4,7%2] PENDING\n13 PENDING\n  12_1 COMPLETING \n", ' ');
    QCOMPARE(q.at("12").at(0), std::string("RUNNING"));
    QCOMPARE(q.at("12").at(1), std::string("COMPLETING"));
    for (std::size_t t : {2, 3, 4, 7}) QCOMPARE(q.at("12").at(t), std::string("PENDING"));
    QVERIFY(!q.at("12").count(5));
    QVERIFY(!q.count("13"));  // not an array task
    const auto a = SlurmExecutor::parseTaskStates("12_1|CANCELLED by 0\n12_1.batch|CANCELLED\n12_2|TIMEOUT\n", '|');
    QCOMPARE(a.at("12").at(1), std::string("CANCELLED"));
    QCOMPARE(a.at("12").at(2), std::string("TIMEOUT"));
    QCOMPARE(a.at("12").size(), std::size_t(2));  // the .batch step is not a task
  }

  void submitWritesTheFilesAndRecordsTheJob() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    FakeCommands fake;
    int next_id = 41;
    fake.programs["sbatch"] = [&](const std::vector<std::string>&) {
      return answer(0, std::to_string(++next_id) + "\n");
    };
    SlurmExecutor slurm(dir, fake);
    SlurmOptions o;
    o.tasks = 2;
    const SlurmSubmission s = slurm.submit({0, 1, 2, 5}, o, "/bin/kvscope-cli");
    QCOMPARE(s.number, 1);
    QCOMPARE(s.job_id, std::string("42"));
    QCOMPARE(s.tasks, std::size_t(2));
    QCOMPARE(fake.calls.back(), (std::vector<std::string>{"sbatch", "--parsable", dir + "/slurm/submit-1.sbatch"}));
    QCOMPARE(readText(dir + "/slurm/submit-1.runs"), std::string("0 2\n1 5\n"));
    QVERIFY(readText(s.script_path).find("#SBATCH --array=0-1\n") != std::string::npos);
    QCOMPARE(slurm.taskRuns(1, 1), (std::vector<std::size_t>{1, 5}));
    QVERIFY_THROWS_EXCEPTION(InputError, slurm.taskRuns(1, 2));
    QVERIFY_THROWS_EXCEPTION(InputError, slurm.taskRuns(7, 0));

    const SlurmSubmission again = slurm.submit({2}, SlurmOptions{}, "/bin/kvscope-cli");
    QCOMPARE(again.number, 2);
    QCOMPARE(readText(dir + "/slurm/jobs"), std::string("1 42\n2 43\n"));
    QCOMPARE(slurm.jobs(), (std::vector<std::pair<int, std::string>>{{1, "42"}, {2, "43"}}));
  }

  void submitSaysWhatIsWrongWithSbatch() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    FakeCommands none;  // no sbatch at all
    try {
      SlurmExecutor(dir, none).submit({0}, SlurmOptions{}, "/bin/kvscope-cli");
      QFAIL("no error without sbatch");
    } catch (const InputError& e) {
      QCOMPARE(std::string(e.what()), std::string("sbatch not found: install slurm-client or use --executor local"));
    }
    QVERIFY(!fs::exists(dir + "/slurm/submit-1.runs"));  // no task will ever read it
    QVERIFY(!fs::exists(dir + "/slurm/jobs"));

    FakeCommands refusing;
    refusing.programs["sbatch"] = [](const std::vector<std::string>&) {
      return answer(1, "", "sbatch: error: invalid partition specified: gpu\n");
    };
    try {
      SlurmExecutor(dir, refusing).submit({0}, SlurmOptions{}, "/bin/kvscope-cli");
      QFAIL("no error when sbatch fails");
    } catch (const InputError& e) {
      QVERIFY2(std::string(e.what()).find("invalid partition specified: gpu") != std::string::npos, e.what());
    }
    QVERIFY(!fs::exists(dir + "/slurm/jobs"));
  }

  void statesComeFromTheFilesSqueueAndSacct() {
    QTemporaryDir tmp;
    const std::string dir = tmp.path().toStdString();
    FakeCommands fake;
    fake.programs["sbatch"] = [](const std::vector<std::string>&) { return answer(0, "7\n"); };
    SlurmExecutor slurm(dir, fake);
    SlurmOptions o;
    o.tasks = 6;
    slurm.submit({0, 1, 2, 3, 4, 5}, o, "/bin/kvscope-cli");  // run i in task 7_i; run 6 never submitted
    const std::vector<std::string> stems{"a", "b", "c", "d", "e", "f", "g"};
    // b runs (its recording's temporary exists), c waits in its running task, d is pending, e failed
    // (its error file), f was cancelled (sacct), a is done.
    std::string error;
    QVERIFY(AtomicFile::write(AtomicFile::partialPath(dir + "/b.kvrec"), "x", &error));
    QVERIFY(AtomicFile::write(slurm.errorPath("e"), "e: the scenario's trace is missing\nmore\n", &error));
    fake.programs["squeue"] = [](const std::vector<std::string>& argv) {
      const bool asks = std::find(argv.begin(), argv.end(), "7") != argv.end();
      return answer(0, asks ? "7_1 RUNNING\n7_2 RUNNING\n7_[3] PENDING\n" : "");
    };
    fake.programs["sacct"] = [](const std::vector<std::string>&) {
      return answer(0, "7_5|CANCELLED by 0\n7_4|FAILED\n");
    };
    const auto s = slurm.states({true, false, false, false, false, false, false}, stems);
    QCOMPARE(s.size(), std::size_t(7));
    QCOMPARE(s[0].state, SlurmRunState::Done);
    QCOMPARE(s[0].task, std::string("7_0"));
    QCOMPARE(s[1].state, SlurmRunState::Running);
    QCOMPARE(s[2].state, SlurmRunState::Pending);
    QCOMPARE(s[2].detail, std::string("waiting in its running task"));
    QCOMPARE(s[3].state, SlurmRunState::Pending);
    QCOMPARE(s[4].state, SlurmRunState::Failed);
    QCOMPARE(s[4].detail, std::string("e: the scenario's trace is missing"));  // the error file wins over sacct
    QCOMPARE(s[5].state, SlurmRunState::Failed);
    QCOMPARE(s[5].detail, std::string("CANCELLED"));
    QCOMPARE(s[6].state, SlurmRunState::Missing);
    QVERIFY(s[6].task.empty());
    QVERIFY(slurm.notes().empty());

    // Without squeue or sacct (no Slurm client here): the files alone; a note says so.
    fake.programs.erase("squeue");
    fake.programs.erase("sacct");
    const auto files = slurm.states({true, false, false, false, false, false, false}, stems);
    QCOMPARE(files[0].state, SlurmRunState::Done);
    QCOMPARE(files[1].state, SlurmRunState::Missing);
    QCOMPARE(files[4].state, SlurmRunState::Failed);
    QCOMPARE(slurm.notes().size(), std::size_t(1));
    QVERIFY(slurm.notes()[0].find("squeue not found") != std::string::npos);

    // squeue refuses a list of only finished jobs: nothing is queued, and that is no problem.
    fake.programs["squeue"] = [](const std::vector<std::string>&) {
      return answer(1, "", "slurm_load_jobs error: Invalid job id specified\n");
    };
    QCOMPARE(slurm.states({false, false, false, false, false, false, false}, stems)[3].state, SlurmRunState::Missing);
    QVERIFY(slurm.notes().empty());
  }

  void theSweepFileParsesBackToTheSameRuns() {
    QTemporaryDir tmp;
    SweepSpec s;
    s.scenario = "e3-load-floor";
    s.axes = {SweepSpec::parseGrid("rho=0.90,0.95"), SweepSpec::parseGrid("policy=kv-aware,exclusive-overlap")};
    s.seeds = {3, 7, 11};
    s.baseline = SweepSpec::parseBaseline("policy=exclusive-overlap,rho=0.95");
    s.fixed_knobs = {{"cache_threshold", 0.1}};
    s.duration_s = 1234.5;
    s.level = 0.01;
    s.validate();
    const std::string path = tmp.filePath("sweep.json").toStdString();
    const SweepSpec back = SweepFile::parse(SweepFile::text(s), path);
    back.validate();
    QCOMPARE(back.baselineIndex(), s.baselineIndex());
    QCOMPARE(back.seeds, s.seeds);
    QCOMPARE(back.fixed_knobs, s.fixed_knobs);
    QCOMPARE(back.duration_s, s.duration_s);
    QCOMPARE(back.level, s.level);
    QCOMPARE(back.jobs, 0u);
    const SweepRunner a(s, tmp.path().toStdString(), nullptr), b(back, tmp.path().toStdString(), nullptr);
    QCOMPARE(a.runStems(), b.runStems());
    const auto points = s.points();
    for (const auto& p : points) QCOMPARE(b.runIdentity(p, 7), a.runIdentity(p, 7));
  }
};

QTEST_GUILESS_MAIN(TestSlurmExecutor)
#include "test_slurm_executor.moc"
