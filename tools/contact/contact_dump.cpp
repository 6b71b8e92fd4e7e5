// Dumps constraint-space contact problems (Delassus G, drift g, cone blocks) of the contact
// scenes with clusterdyn's ADMM and PGS impulses, for solvers outside the library (the Pinocchio
// cross-check tools/contact/pinocchio_contact_check.py, docs/contact.md).
//
//   contact_dump MODELS_DIR URDFPLUS_DIR OUT_FILE
//
// Text format, one problem after another:
//   problem NAME m NBLOCKS
//   block TYPE ROW0 ROWS MU        (TYPE: coulomb | bilateral | inactive), NBLOCKS lines
//   G v_1 ... v_mm                 (row-major)
//   g v_1 ... v_m
//   admm STATUS ITERATIONS CONE VELOCITY COMPLEMENTARITY l_1 ... l_m
//   pgs  ...                       (same)
// Problems of the cheetah are left out (with a line on stderr) when URDFPLUS_DIR lacks it.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "contact_scenes.hpp"

using namespace clusterdyn;

namespace {

const char* typeName(ConeType t) {
  switch (t) {
    case ConeType::Coulomb:
      return "coulomb";
    case ConeType::Bilateral:
      return "bilateral";
    case ConeType::Inactive:
      return "inactive";
    case ConeType::Torsional:
      return "torsional";
    case ConeType::Rolling:
      return "rolling";
  }
  return "?";
}

void writeSolution(std::ostream& out, const char* tag, Status s, const ContactSolverResult& r,
                   const VecX& l) {
  out << tag << ' ' << (s == Status::Ok ? "ok" : "notconverged") << ' ' << r.iterations << ' '
      << r.residuals.cone << ' ' << r.residuals.velocity << ' ' << r.residuals.complementarity;
  for (int i = 0; i < l.size(); ++i) out << ' ' << l[i];
  out << '\n';
}

/// Assembles the problem at (q, v) and writes it with both solutions.
bool dump(std::ostream& out, const std::string& name, const ClusterModel& cm, ClusterData& data,
          const ContactProblem& problem, const VecX& q, const VecX& v) {
  ContactData cd(cm, problem);
  StepSettings st;
  st.contact.tolerance = 1e-12;
  st.contact.maxIterations = 100000;
  if (assembleContactProblem(cm, data, problem, cd, q, v, VecX::Zero(cm.ny), st) != Status::Ok) {
    std::cerr << name << ": " << data.errorMessage() << '\n';
    return false;
  }
  const int m = static_cast<int>(cd.g.size());
  out << "problem " << name << ' ' << m << ' ' << cd.blocks.size() << '\n';
  for (const ConeBlock& b : cd.blocks)
    out << "block " << typeName(b.type) << ' ' << b.row0 << ' ' << b.rows << ' ' << b.mu << '\n';
  out << 'G';
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) out << ' ' << cd.G(i, j);
  out << "\ng";
  for (int i = 0; i < m; ++i) out << ' ' << cd.g[i];
  out << '\n';
  VecX la = VecX::Zero(m), lp = VecX::Zero(m);
  ContactSolverResult ra, rp;
  const Status sa = solveContactAdmm(cd.G, cd.g, cd.blocks, st.contact, cd.solver, la, ra);
  writeSolution(out, "admm", sa, ra, la);
  const Status sp = solveContactPgs(cd.G, cd.g, cd.blocks, st.contact, cd.solver, lp, rp);
  writeSolution(out, "pgs", sp, rp, lp);
  std::cerr << name << ": m = " << m << ", ADMM " << ra.iterations << " it (" << statusName(sa)
            << "), PGS " << rp.iterations << " it (" << statusName(sp) << ")\n";
  return true;
}

/// Walker: standing (feet 0.1 mm in the ground, at rest: sticking) or sliding (trunk moving
/// sideways and forward at 0.5 m/s over ground with mu = 0.1). Embedded loops, or cut and solved
/// as bilateral rows (the same closed state mapped by coordinate names).
bool walker(std::ostream& out, const std::string& dir, bool sliding, bool cut) {
  const double mu = sliding ? 0.1 : 0.8;
  const ClusterModel ce = scenes::walkerModel(dir, false);
  ClusterData de(ce);
  ContactProblem pe(ce);
  scenes::addWalkerFeet(ce, pe, mu);
  ContactData cde(ce, pe);
  VecX y = VecX::Zero(ce.nyq), ydot = VecX::Zero(ce.ny);
  y[2] = 0.3;
  y.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.02, Vec3::UnitY())).coeffs();
  for (int i = 0; i < 4; ++i) y[7 + i] = 0.05 * (i + 1);
  if (sliding) ydot.head<6>() << 0.0, 0.0, 0.1, 0.5, 0.3, -0.05;
  if (scenes::placeOnGround(ce, de, pe, cde, y, ydot, -1e-4) != Status::Ok) {
    std::cerr << "walker: " << de.errorMessage() << '\n';
    return false;
  }
  const std::string name =
      std::string("walker_") + (sliding ? "sliding" : "sticking") + (cut ? "_looprows" : "");
  if (!cut) return dump(out, name, ce, de, pe, de.q, de.v);
  const ClusterModel cc = scenes::walkerModel(dir, true);
  const ConstraintSet loops = cutLoopConstraints(cc);
  ContactProblem pc(cc, &loops);
  scenes::addWalkerFeet(cc, pc, mu);
  ClusterData dc(cc);
  VecX qc(cc.treeModel.nq), vc(cc.treeModel.nv);
  for (int i = 0; i < ce.treeModel.nq; ++i)
    qc[cc.treeModel.positionIndex(ce.treeModel.positionNames[i])] = de.q[i];
  for (int i = 0; i < ce.treeModel.nv; ++i)
    vc[cc.treeModel.velocityIndex(ce.treeModel.velocityNames[i])] = de.v[i];
  return dump(out, name, cc, dc, pc, qc, vc);
}

/// Cheetah standing on four point feet (sticking) or sliding at 0.5 m/s with mu = 0.1; the
/// bilateral variant pins the front-right foot to the ground by a 3-row Point constraint.
bool cheetah(std::ostream& out, const std::string& dir, bool sliding, bool pinned) {
  const double mu = sliding ? 0.1 : 0.8;
  const ClusterModel cm = scenes::cheetahModel(dir);
  ContactProblem feet(cm);
  scenes::addCheetahFeet(cm, feet, mu);
  ClusterData data(cm);
  ContactData cd(cm, feet);
  VecX y = scenes::cheetahStanding(cm, 0.4), ydot = VecX::Zero(cm.ny);
  if (sliding) ydot.head<6>() << 0.0, 0.0, -0.1, 0.5, -0.2, 0.0;
  if (scenes::placeOnGround(cm, data, feet, cd, y, ydot, -1e-4) != Status::Ok) {
    std::cerr << "cheetah: " << data.errorMessage() << '\n';
    return false;
  }
  const std::string name =
      std::string("cheetah_") + (sliding ? "sliding" : "sticking") + (pinned ? "_pinrow" : "");
  if (!pinned) return dump(out, name, cm, data, feet, data.q, data.v);
  // The front-right foot pinned where it is (phi = 0) by a Point constraint to the world instead
  // of its contact: 3 bilateral rows and three Coulomb blocks.
  RigidConstraint c;
  c.name = "FR_pin";
  c.type = ConstraintType::Point;
  c.body1 = cm.treeModel.bodyId("FR_knee_link");
  c.placement1.p = Vec3(0.0, 0.0, -0.19);
  Data fk(cm.treeModel);
  forwardKinematics(cm.treeModel, fk, data.q);
  c.placement2.p = fk.oMi[c.body1].R * c.placement1.p + fk.oMi[c.body1].p;
  c.body2 = -1;
  ConstraintSet pin(cm);
  pin.add(c);
  ContactProblem problem(cm, &pin);
  scenes::addCheetahFeet(cm, problem, mu, "FR");
  return dump(out, name, cm, data, problem, data.q, data.v);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: contact_dump MODELS_DIR URDFPLUS_DIR OUT_FILE\n";
    return 2;
  }
  setLogLevel(LogLevel::Off);
  std::ofstream out(argv[3]);
  out << std::setprecision(17);
  bool ok = true;
  try {
    for (const bool sliding : {false, true})
      for (const bool cut : {false, true}) ok = walker(out, argv[1], sliding, cut) && ok;
    if (std::filesystem::exists(std::string(argv[2]) + "/mini_cheetah.urdf")) {
      for (const bool sliding : {false, true})
        for (const bool pinned : {false, true}) ok = cheetah(out, argv[2], sliding, pinned) && ok;
    } else {
      std::cerr << "no " << argv[2] << "/mini_cheetah.urdf: cheetah problems left out\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "contact_dump: " << e.what() << '\n';
    return 1;
  }
  return ok ? 0 : 1;
}
