// InputFile::readLine against std::getline on lines around its internal chunk size (16 KiB), with
// and without a final newline, and its cap: a longer line keeps its first max bytes and says so.
#include <QtTest>

#include <sstream>

#include "core/io/InputFile.h"

using namespace kvscope;

class TestInputFile : public QObject {
  Q_OBJECT
 private slots:
  void readsWhatGetlineReads_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("empty") << QByteArray();
    QTest::newRow("empty lines") << QByteArray("\n\n\n");
    QTest::newRow("no final newline") << QByteArray("a\nbc");
    QTest::newRow("crlf kept") << QByteArray("a\r\nb\r\n");
    for (int n : {16382, 16383, 16384, 16385, 40000})
      QTest::newRow(qPrintable(QString("line of %1").arg(n))) << QByteArray(n, 'x') + "\nnext\n" + QByteArray(n, 'y');
  }
  void readsWhatGetlineReads() {
    QFETCH(QByteArray, text);
    std::istringstream a(text.toStdString()), b(text.toStdString());
    std::vector<std::string> expected, got;
    for (std::string line; std::getline(a, line);) expected.push_back(line);
    std::string line;
    bool too_long = false;
    while (InputFile::readLine(b, line, &too_long, "t")) {
      QVERIFY(!too_long);
      got.push_back(line);
    }
    QCOMPARE(got, expected);
  }

  void aLongerLineIsCutAndSaidSo() {
    std::istringstream in(std::string(50000, 'z') + "\nshort\n");
    std::string line;
    bool too_long = false;
    QVERIFY(InputFile::readLine(in, line, &too_long, "t", 20000));
    QVERIFY(too_long);
    QCOMPARE(line, std::string(20000, 'z'));
    QVERIFY(InputFile::readLine(in, line, &too_long, "t", 20000));
    QVERIFY(!too_long);
    QCOMPARE(line, std::string("short"));
    QVERIFY(!InputFile::readLine(in, line, &too_long, "t", 20000));
  }
};

QTEST_GUILESS_MAIN(TestInputFile)
#include "test_input_file.moc"
