#pragma once
// The Mooncake P x D link grid: a row per prefill worker, a column per decode worker; each cell
// the link's state (alive / suspect / dead), queue depth and bytes in flight, with the last
// failure reason as its tooltip.
#include <QAbstractTableModel>
#include <QStringList>

#include <map>
#include <string>
#include <vector>

namespace kvscope {

class TelemetryStore;
struct LinkSeries;

class LinkHealthModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit LinkHealthModel(QObject* parent = nullptr);
  void refresh(const TelemetryStore& store);
  // Per worker name, SourceStatus::worker_health's text: a link to (or from) a worker that cannot
  // be reached is greyed out, its state unknown rather than "alive".
  void setWorkerHealth(const std::map<std::string, std::string>& health) { health_ = health; }
  // "" when both ends are reachable, else why the link's state is unknown.
  QString unreachableReason(const QModelIndex& index) const;

  // The link in a cell, null when that pair has none (e.g. a unified cluster).
  const LinkSeries* linkAt(const QModelIndex& index) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QStringList prefill_, decode_;
  std::vector<int> decode_workers_;        // store worker index of each column
  const TelemetryStore* store_ = nullptr;  // the cells' links, looked up when read
  std::map<std::string, std::string> health_;
};

}  // namespace kvscope
