// AtomicFile, the one check of every output path a user names: a FIFO, a device node, a
// directory or a socket is refused with the path named, a symlink is followed (its target written, the
// link kept), and nothing ever blocks on a FIFO nobody reads. The nodes are made here, in a temp dir.
#include <QtTest>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/io/AtomicFile.h"

using namespace kvscope;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

class TestAtomicFile : public QObject {
  Q_OBJECT
 private slots:
  void refusesEveryNodeThatIsNotARegularFile() {
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    const std::string sub = dir.filePath("sub").toStdString();
    fs::create_directory(sub);
    std::vector<std::pair<std::string, std::string>> nodes{{fifo, "a FIFO"}, {sub, "a directory"}};
    // A character device with /dev/null's numbers, made in the temp dir (root only).
    const std::string device = dir.filePath("null").toStdString();
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) nodes.emplace_back(device, "a character device");
    const std::string sock = dir.filePath("sock").toStdString();
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock.c_str());
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) nodes.emplace_back(sock, "a socket");

    for (const auto& [path, kind] : nodes) {
      std::string error;
      QVERIFY(!AtomicFile::target(path, &error));
      QVERIFY2(error.rfind(path + ": is " + kind + ", not a regular file", 0) == 0, error.c_str());
      error.clear();
      QVERIFY(!AtomicFile::write(path, "x", &error));
      QVERIFY2(error.find(path + ": is " + kind) == 0, error.c_str());
      error.clear();
      QCOMPARE(AtomicFile::openForWrite(path, &error), -1);
      QVERIFY2(error.find(kind) != std::string::npos, error.c_str());
      // Left as it was: no temporary beside it, the node not replaced.
      QVERIFY(!fs::exists(AtomicFile::partialPath(path)));
      QVERIFY(!fs::is_regular_file(path));
    }
    ::close(fd);
    QCOMPARE(fs::status(fifo).type(), fs::file_type::fifo);
    if (fs::exists(device)) QCOMPARE(fs::status(device).type(), fs::file_type::character);
  }

  void aFinishedTemporaryIsNotRenamedOverAFifo() {
    QTemporaryDir dir;
    const std::string fifo = dir.filePath("out.json").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    const std::string tmp = AtomicFile::partialPath(fifo);
    std::ofstream(tmp) << "done";
    std::string error;
    QVERIFY(!AtomicFile::moveIntoPlace(tmp, fifo, &error));
    QVERIFY2(error.find("a FIFO") != std::string::npos, error.c_str());
    QCOMPARE(fs::status(fifo).type(), fs::file_type::fifo);
    QVERIFY(!fs::exists(tmp));
  }

  void aSymlinkIsFollowedNeverReplaced() {
    QTemporaryDir dir;
    const std::string real = dir.filePath("real.csv").toStdString();
    std::ofstream(real) << "old";
    const std::string link = dir.filePath("link.csv").toStdString();
    fs::create_symlink("real.csv", link);  // relative, as `ln -s` makes them
    const std::string chain = dir.filePath("chain.csv").toStdString();
    fs::create_symlink(link, chain);
    std::string error;
    QVERIFY2(AtomicFile::write(chain, "new", &error), error.c_str());
    QVERIFY(fs::is_symlink(link));
    QVERIFY(fs::is_symlink(chain));
    QCOMPARE(slurp(real), std::string("new"));
    QVERIFY(!fs::exists(AtomicFile::partialPath(real)));

    // A dangling link: the file it names is created.
    const std::string dangling = dir.filePath("dangling").toStdString();
    fs::create_symlink("made.csv", dangling);
    QVERIFY2(AtomicFile::write(dangling, "made", &error), error.c_str());
    QVERIFY(fs::is_symlink(dangling));
    QCOMPARE(slurp(dir.filePath("made.csv").toStdString()), std::string("made"));

    // In place: openForWrite truncates the target and keeps the link.
    const int fd = AtomicFile::openForWrite(link, &error);
    QVERIFY2(fd >= 0, error.c_str());
    QCOMPARE(::write(fd, "xy", 2), ssize_t{2});
    ::close(fd);
    QCOMPARE(slurp(real), std::string("xy"));
    QVERIFY(fs::is_symlink(link));

    // A link to a FIFO is refused like the FIFO.
    const std::string fifo = dir.filePath("fifo").toStdString();
    QCOMPARE(::mkfifo(fifo.c_str(), 0644), 0);
    const std::string to_fifo = dir.filePath("to-fifo").toStdString();
    fs::create_symlink(fifo, to_fifo);
    QVERIFY(!AtomicFile::write(to_fifo, "x", &error));
    QVERIFY2(error.find("a FIFO") != std::string::npos, error.c_str());
    QVERIFY(fs::is_symlink(to_fifo));

    // A loop ends.
    const std::string a = dir.filePath("a").toStdString(), b = dir.filePath("b").toStdString();
    fs::create_symlink(b, a);
    fs::create_symlink(a, b);
    QVERIFY(!AtomicFile::write(a, "x", &error));
    QVERIFY2(error.find("too many levels") != std::string::npos, error.c_str());
  }

  void aRegularOrNewFileIsWritten() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("x.json").toStdString();
    std::string error;
    QCOMPARE(AtomicFile::target(path, &error).value_or(""), path);
    QVERIFY2(AtomicFile::write(path, "1", &error), error.c_str());
    QVERIFY2(AtomicFile::write(path, "2", &error), error.c_str());
    QCOMPARE(slurp(path), std::string("2"));
  }

  // A set (a sweep's three summaries) is written whole or not at all: when the disk fills while
  // its last file is written, the previous set is left as it was, no file of the new one beside
  // it and no temporary. A full disk is made with RLIMIT_FSIZE (writes past it fail with EFBIG).
  void aSetIsWrittenWholeOrNotAtAll() {
    QTemporaryDir dir;
    const std::string md = dir.filePath("summary.md").toStdString(), json = dir.filePath("summary.json").toStdString();
    std::string error;
    QVERIFY2(AtomicFile::writeSet({{md, "old md"}, {json, "old json"}}, &error), error.c_str());

    rlimit before{};
    QVERIFY(::getrlimit(RLIMIT_FSIZE, &before) == 0);
    const auto previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = before;
    small.rlim_cur = 4096;
    QVERIFY(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const bool written = AtomicFile::writeSet({{md, "new md"}, {json, std::string(8192, 'j')}}, &error);
    ::setrlimit(RLIMIT_FSIZE, &before);
    std::signal(SIGXFSZ, previous);

    QVERIFY(!written);
    QVERIFY2(error.find("summary.json: cannot write") != std::string::npos, error.c_str());
    QCOMPARE(slurp(md), std::string("old md"));
    QCOMPARE(slurp(json), std::string("old json"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 2);  // no temporary left
  }
};

QTEST_GUILESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
