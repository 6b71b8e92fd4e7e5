// Instruction-count harness (docs/benchmarks.md): calls one algorithm N times on one random
// closed state, for valgrind --tool=callgrind, whose counts do not depend on machine load.
// Per-call instructions = (total(3N) - total(N)) / 2N.
//
//   bench_instructions ROBOT ALGO N      ROBOT: a name in shared/urdfplus (mini_cheetah, ...)
//                                         ALGO:  ceaba | cernea | H  (on ROBOT.urdf)
//                                                aba | rnea | crba  (on ROBOT_approximate.urdf)
//                                                delassus | damped | caba | caba1 | proxpv
//                                                (on ROBOT.urdf with the contacts of
//                                                bench_constrained: 6D ankles for *humanoid*,
//                                                3D knees for *cheetah*; caba1 = one pass)
//   bench_instructions MODEL.urdf ceaba|cutpv N  a model file (ROBOT ending in .urdf): CE-ABA
//                                         with the loops embedded, or proxPv on the same model
//                                         loaded with its loops cut (ModelOptions::cutLoops,
//                                         cutLoopConstraints) at the same closed state and torques
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;

int main(int argc, char** argv) {
  const std::string algos =
      " ceaba cernea H aba rnea crba delassus damped caba caba1 proxpv cutpv ";
  if (argc != 4 || algos.find(" " + std::string(argv[2]) + " ") == std::string::npos ||
      std::atoi(argv[3]) <= 0) {
    std::fprintf(stderr,
                 "usage: %s ROBOT ceaba|cernea|H|aba|rnea|crba|delassus|damped|caba|caba1|proxpv "
                 "N\n       %s MODEL.urdf ceaba|cutpv N\n",
                 argv[0], argv[0]);
    return 2;
  }
  const std::string dir = std::string(CLUSTERDYN_BENCH_URDF_DIR) + "/";
  const std::string robot = argv[1], algo = argv[2];
  const int n = std::atoi(argv[3]);
  setLogLevel(LogLevel::Error);
  try {
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> uni(-1.0, 1.0);
    if (algo == "aba" || algo == "rnea" || algo == "crba") {
      const Model model = loadTreeModel(dir + robot + "_approximate.urdf");
      Data data(model);
      const VecX q = neutralConfiguration(model);
      VecX v(model.nv), x(model.nv);
      for (int i = 0; i < model.nv; ++i) v[i] = uni(rng), x[i] = uni(rng);
      for (int i = 0; i < n; ++i) {
        const Status s = algo == "aba"    ? aba(model, data, q, v, x)
                         : algo == "rnea" ? rnea(model, data, q, v, x)
                                          : crba(model, data, q);
        if (s != Status::Ok) return std::fprintf(stderr, "%s\n", data.errorMessage()), 1;
      }
      return 0;
    }
    const bool file = robot.size() > 5 && robot.compare(robot.size() - 5, 5, ".urdf") == 0;
    const ClusterModel model = loadModel(file ? robot : dir + robot + ".urdf");
    ClusterData data(model);
    VecX y(model.nyq), yd(model.ny), x(model.ny);
    const VecX q0 = neutralConfiguration(model.treeModel);
    for (int i = 0; i < model.nyq; ++i) y[i] = 0.3 * uni(rng);
    for (int k = 0; k < model.ny; ++k) {  // 0.03 m for prismatic joints (Stewart platform legs)
      const int b = model.treeModel.velocityOwner[model.independentVelocity[k]];
      if (model.treeModel.joints[b].type != JointType::Prismatic) continue;
      for (int i = 0; i < model.nyq; ++i)
        if (model.independentPosition[i] == model.treeModel.idx_q[b]) y[i] *= 0.1;
    }
    for (const Cluster& c : model.clusters)  // keep the floating base's unit quaternion
      if (model.treeModel.joints[c.firstBody].type == JointType::Floating)
        for (int i = c.yq0; i < c.yq0 + c.nyq; ++i) y[i] = q0[model.independentPosition[i]];
    for (int i = 0; i < model.ny; ++i) yd[i] = uni(rng), x[i] = uni(rng);
    if (independentToSpanning(model, data, y, yd) != Status::Ok)
      return std::fprintf(stderr, "%s\n", data.errorMessage()), 1;
    const VecX q = data.q, v = data.v;
    if (algo == "cutpv") {  // the same state and independent torques on the cut-loop model
      ModelOptions options;
      options.cutLoops = true;
      const ClusterModel cut = loadModel(file ? robot : dir + robot + ".urdf", options);
      const Model &te = model.treeModel, &tc = cut.treeModel;
      auto byName = [](const std::vector<std::string>& from, const VecX& a,
                       const std::vector<std::string>& to) {
        VecX out = VecX::Zero(static_cast<Eigen::Index>(to.size()));
        for (size_t i = 0; i < to.size(); ++i)
          for (size_t j = 0; j < from.size(); ++j)
            if (from[j] == to[i]) out[i] = a[j];
        return out;
      };
      VecX tauSpan = VecX::Zero(te.nv);
      for (int k = 0; k < model.ny; ++k) tauSpan[model.independentVelocity[k]] = x[k];
      const VecX qc = byName(te.positionNames, q, tc.positionNames);
      const VecX vc = byName(te.velocityNames, v, tc.velocityNames);
      const VecX tc0 = byName(te.velocityNames, tauSpan, tc.velocityNames);
      const ConstraintSet set = cutLoopConstraints(cut);
      ClusterData dc(cut);
      ConstraintData cd(cut, set);
      ProximalSettings settings;
      for (int i = 0; i < n; ++i) {
        const Status s = proxPv(cut, dc, set, cd, qc, vc, tc0, settings);
        if (s != Status::Ok && s != Status::NotConverged)
          return std::fprintf(stderr, "%s\n", dc.errorMessage()), 1;
      }
      std::printf("iterations %d\n", cd.result.iterations);
      return 0;
    }
    if (algo == "delassus" || algo == "damped" || algo == "caba" || algo == "caba1" ||
        algo == "proxpv") {
      ConstraintSet set(model);
      const bool humanoid = robot.find("humanoid") != std::string::npos;
      for (const char* link : humanoid
                                  ? std::vector<const char*>{"left_ankle_link", "right_ankle_link"}
                                  : std::vector<const char*>{"FR_knee_link", "FL_knee_link",
                                                             "HR_knee_link", "HL_knee_link"})
        set.addContact(link, humanoid ? ConstraintType::Weld : ConstraintType::Point);
      ConstraintData cd(model, set);
      ProximalSettings settings, onePass;
      onePass.mu = 1e-8;
      onePass.maxIterations = 0;
      for (int i = 0; i < n; ++i) {
        const Status s = algo == "delassus" ? delassusMatrix(model, data, set, cd, q)
                         : algo == "damped" ? dampedDelassusInverse(model, data, set, cd, q, 1e-6)
                         : algo == "caba"  ? constrainedAba(model, data, set, cd, q, v, x, settings)
                         : algo == "caba1" ? constrainedAba(model, data, set, cd, q, v, x, onePass)
                                           : proxPv(model, data, set, cd, q, v, x, settings);
        if (s != Status::Ok && s != Status::NotConverged)
          return std::fprintf(stderr, "%s\n", data.errorMessage()), 1;
      }
      std::printf("iterations %d\n", cd.result.iterations);
      return 0;
    }
    for (int i = 0; i < n; ++i) {
      const Status s = algo == "ceaba"    ? ceAba(model, data, q, v, x)
                       : algo == "cernea" ? ceRnea(model, data, q, v, x)
                                          : clusterMassMatrix(model, data, q);
      if (s != Status::Ok) return std::fprintf(stderr, "%s\n", data.errorMessage()), 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
