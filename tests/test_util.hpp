// Shared helpers of the clusterdyn test suite: random kinematic trees (built programmatically
// and, from the same random description, written as URDF text), random states, error measures
// and paths of the shared/ and models/ folders.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

namespace clusterdyn::test {

// ---------------------------------------------------------------------------------------------
// Random models.

/// What randomTreeModel() / randomUrdfString() generate.
struct RandomModelOptions {
  /// Moving bodies (tree joints with dofs). With floatingBase the floating base is one of them.
  int nbodies = 6;
  /// First body attached to the world by a floating joint; all other bodies hang below it.
  bool floatingBase = false;
  /// Probability that a new link is attached to an ancestor of the previous link instead of
  /// the previous link itself (0 = a serial chain).
  double branchProbability = 0.4;
  /// Probability that a generated link is attached by a fixed joint (fused into its parent body,
  /// kept as a frame). Fused links do not count in nbodies.
  double fixedLinkProbability = 0.0;
  /// Relative weights of the joint types of the non-floating joints.
  double revoluteWeight = 4.0;
  double prismaticWeight = 1.0;
  double sphericalWeight = 1.0;
  double planarWeight = 1.0;
  /// Probability that a revolute / prismatic joint has a <limit> (else continuous / unlimited).
  double limitProbability = 0.5;
  /// Joint origins: translations uniform in [-placementScale, placementScale]^3.
  double placementScale = 0.4;
  std::string robotName = "random_robot";
};

/// A random model and the URDF text describing the same mechanism (same numbering, names,
/// frames, inertias and limits as buildTreeModel produces from the text).
struct RandomRobot {
  Model model;
  std::string urdf;
};

/// Both descriptions of one random mechanism (consumes the rng once).
RandomRobot randomRobot(std::mt19937_64& rng, const RandomModelOptions& options);
/// A random kinematic tree built programmatically (parent, joints, placements, inertias, names,
/// frames, limits, then Model::finalize()).
Model randomTreeModel(std::mt19937_64& rng, const RandomModelOptions& options);
/// The URDF text of a random mechanism; *equivalent (if given) receives the programmatic model.
std::string randomUrdfString(std::mt19937_64& rng, const RandomModelOptions& options,
                             Model* equivalent = nullptr);

/// Random physically valid inertia: mass in [mmin, mmax], centre of mass in [-0.2, 0.2]^3,
/// rotational inertia from random positive second moments in random axes (triangle inequality
/// holds).
SpatialInertia randomInertia(std::mt19937_64& rng, double mmin = 0.2, double mmax = 3.0);
/// Uniformly distributed random rotation.
Mat3 randomRotation(std::mt19937_64& rng);
/// Random unit vector (either sign).
Vec3 randomUnitVector(std::mt19937_64& rng);

/// Asserts that two models describe the same mechanism (sizes, parents, joints, placements,
/// inertias, names, frames, limits) within tol.
::testing::AssertionResult modelsEquivalent(const Model& a, const Model& b, double tol = 1e-12);

// ---------------------------------------------------------------------------------------------
// Random states.

struct RandomState {
  VecX q, v, a, tau;
};
/// q = randomConfiguration(range), v, a, tau uniform in [-range, range].
RandomState randomState(const Model& model, std::mt19937_64& rng, double range = 1.0);
VecX randomVector(Eigen::Index n, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0);
/// Random external forces, one per body.
std::vector<Force> randomForces(const Model& model, std::mt19937_64& rng, double scale = 1.0);
/// The vector x of coordinates named `from` re-ordered as the coordinates named `to` (a name
/// missing from `from` gives 0): a spanning state of one model in another model's coordinates
/// (embedded vs cut loops).
VecX byName(const std::vector<std::string>& from, const VecX& x,
            const std::vector<std::string>& to);

// ---------------------------------------------------------------------------------------------
// Errors.

/// max|a - b| / max(floor, max|a|, max|b|): relative for large values, absolute near zero.
double relativeError(const MatX& a, const MatX& b, double floor = 1.0);
/// Success when relativeError(actual, expected, floor) <= tol; prints both otherwise.
::testing::AssertionResult isClose(const MatX& actual, const MatX& expected, double tol,
                                   double floor = 1.0);
::testing::AssertionResult isCloseScalar(double actual, double expected, double tol,
                                         double floor = 1.0);

// ---------------------------------------------------------------------------------------------
// Frames.

/// Index of the frame that is body b's own frame (-1 if none).
int bodyFrameId(const Model& model, int body);
/// Rotation vector of a (near-identity) rotation: vee(log(R)).
Vec3 rotationLog(const Mat3& R);

// ---------------------------------------------------------------------------------------------
// Paths and files.

/// CLUSTERDYN_SHARED_DIR: the shared/ folder of third-party models and reference data. It may
/// be missing: the tests that need it skip themselves (CLUSTERDYN_SKIP_WITHOUT_SHARED).
std::string sharedDir();
/// The bundled models/ folder and the source tree (what the macros CLUSTERDYN_MODELS_DIR and
/// CLUSTERDYN_SOURCE_DIR expand to in the tests).
const char* modelsDir();
const char* sourceDir();
/// CLUSTERDYN_SHARED_DIR/relative, e.g. sharedPath("urdfplus/double_pendulum.urdf").
std::string sharedPath(const std::string& relative);
/// CLUSTERDYN_MODELS_DIR/relative.
std::string modelsPath(const std::string& relative);
/// Paths of the shared tree-only models: urdfplus/double_pendulum.urdf and every
/// urdfplus/*_approximate.urdf (sorted).
std::vector<std::string> sharedTreeModelFiles();
/// The bundled tree-only models: models/*.urdf without <loop>, <coupling> or <mimic> (sorted).
/// Tests that only need some tree models use these always and the shared ones when present.
std::vector<std::string> bundledTreeModelFiles();
/// Writes text into a fresh file under the GoogleTest temporary folder; returns its path.
std::string writeTempFile(const std::string& name, const std::string& text);
/// Whole content of a text file ("" if unreadable).
std::string readTextFile(const std::string& path);

/// A proximal solve (solve(settings) -> Status) that, when NotConverged only because the
/// tolerance is below the rows' rounding floor (its own residual within the tolerance; docs/
/// constraints.md, "What Status::Ok means"), runs again asking for twice the floor. For tests
/// whose tight tolerances sit near rounding on light or fast bodies.
template <class Result, class Settings, class Solve>
auto solveAboveRoundingFloor(const Result& result, Settings s, Solve solve) {
  auto status = solve(s);
  if (status != decltype(status)::Ok && result.residual <= s.tolerance &&
      result.roundingFloor > 0.0) {
    s.tolerance = 2.0 * result.roundingFloor;
    status = solve(s);
  }
  return status;
}

}  // namespace clusterdyn::test

/// Skips the current test, visibly (GTEST_SKIP naming the missing path), when `path` (a file or
/// folder of the shared/ folder: third-party models and reference data) does not exist.
#define CLUSTERDYN_SKIP_WITHOUT_SHARED(path)                                 \
  do {                                                                       \
    const std::string cdSharedPath_ = (path);                                \
    if (!std::filesystem::exists(cdSharedPath_))                             \
      GTEST_SKIP() << "missing " << cdSharedPath_                            \
                   << " (third-party shared folder, CLUSTERDYN_SHARED_DIR)"; \
  } while (0)
