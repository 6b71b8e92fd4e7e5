// Verification of clusterdyn against the third-party reference data in shared/reference/
// (format: shared/reference/README.md, "rbd-reference-data v1").
//
// Two kinds of files, told apart by their content:
//  * Pinocchio files (top-level "coordinates", samples with "aba_ddq"): tree dynamics and rigid
//    contacts, recomputed here with the tree algorithms (aba, rnea, crba, nonLinearEffects,
//    frameJacobian, frame accelerations, dense Delassus / KKT solves).
//  * grbda files (top-level "independent_coordinates", samples with "ydd"): cluster-tree dynamics
//    with loop constraints, recomputed with the cluster algorithms (ceAba, ceRnea,
//    clusterMassMatrix, clusterBias, clusterConstraintMatrices) through prepareGrbda() /
//    computeGrbdaSample() below.
//
// Every vector and matrix is compared BY NAME (coordinate, row, column), never by position.
// Error measure, per entry: |computed - reference| / max(1, |reference|); a quantity's error is
// the maximum over all its entries and all samples. A quantity passes when that maximum is
// <= the tolerance.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/spatial.hpp"

namespace clusterdyn::verify {

// ---------------------------------------------------------------------------------------------
// Results.

enum class Outcome { Passed, Failed, Skipped };
const char* outcomeName(Outcome o);

struct QuantityResult {
  std::string name;  ///< e.g. "aba_ddq", "contact.J", "H"
  Outcome outcome = Outcome::Skipped;
  double maxRelError = 0.0;  ///< max |a - b| / max(1, |b|)
  double maxAbsError = 0.0;  ///< max |a - b|
  int samples = 0;           ///< samples in which the quantity was compared
  long entries = 0;          ///< entries compared in total
  std::string worst;         ///< where maxRelError occurred: "sample 3, FL_hip_to_knee_j"
  std::string note;          ///< why skipped / why failed (status messages)
};

struct VerifyOptions {
  /// Folder the file's model.urdf path is relative to; empty: the parent of the folder holding
  /// the JSON file (the reference files live in shared/reference/, URDFs in shared/urdfplus/).
  std::string modelsDir;
  double tolerance = 1e-9;
};

struct FileReport {
  std::string path;       ///< the JSON file
  std::string kind;       ///< "pinocchio" or "grbda"
  std::string format;     ///< the file's "format" string
  std::string modelPath;  ///< resolved URDF path
  int samples = 0;
  double tolerance = 1e-9;
  std::vector<QuantityResult> quantities;
  std::string error;  ///< non-empty: the file could not be verified (counts as one failure)

  int count(Outcome o) const;
  bool ok() const { return error.empty() && count(Outcome::Failed) == 0; }
};

/// Recomputes every sample of a reference file. Never throws: problems with the file or the
/// model end up in FileReport::error.
FileReport verifyReferenceFile(const std::string& jsonPath, const VerifyOptions& options = {});

/// Human-readable table of one report (one line per quantity).
std::string formatReport(const FileReport& report);

// ---------------------------------------------------------------------------------------------
// Named data, as stored in the reference files.

struct NamedVector {
  std::vector<std::string> names;
  VecX values;
};

struct NamedMatrix {
  std::vector<std::string> rows, cols;
  MatX values;
};

// ---------------------------------------------------------------------------------------------
// grbda files: computeGrbdaSample() runs the cluster-tree algorithms on one sample.

/// One cluster as grbda groups the bodies (file-level "clusters" entry).
struct GrbdaCluster {
  std::string name;
  int parent = -1;        ///< index of the parent cluster in the same list (-1: world)
  std::string jointType;  ///< grbda's "Free", "Revolute", "Generic"
  std::vector<std::string> links, spanningJoints, independentJoints;
  std::optional<NamedMatrix> Gconstant;  ///< explicit clusters: rows spanning, cols independent
};

/// File-level description of a grbda reference file.
struct GrbdaFileInfo {
  std::string urdfPath;  ///< resolved path of the URDF(+) model
  bool floatingBase = false;
  std::string baseJoint, baseLink;  ///< floating models
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);
  std::vector<std::string> spanningJoints;               ///< keys of q
  std::vector<std::string> spanningVelocityCoordinates;  ///< keys of qd / qdd (base tokens first)
  std::vector<std::string> independentCoordinates;       ///< keys of tau / ydd / C; order of H
  std::vector<GrbdaCluster> clusters;
};

/// Inputs of one grbda sample. Base tokens "base:wx".."base:vz" are the base's spatial velocity
/// (acceleration, wrench) in body coordinates, as for clusterdyn's floating joint [w; v].
struct GrbdaSample {
  int index = 0;
  NamedVector q;  ///< spanning joint positions (closed loops / q = G y)
  bool hasBase = false;
  Vec3 basePosition = Vec3::Zero();
  Eigen::Quaterniond baseOrientation = Eigen::Quaterniond::Identity();  ///< R_world_base
  NamedVector qd;   ///< spanning velocities (base tokens + joints)
  NamedVector tau;  ///< independent generalized forces: input of forward dynamics
  NamedVector ydd;  ///< independent accelerations: input of inverse dynamics (gives tau_id)
};

/// Outputs of one grbda sample; a quantity left empty (and not in `failures`) is reported as
/// skipped.
struct GrbdaSampleResult {
  std::optional<NamedVector> ydd;    ///< forward dynamics of tau (independent coordinates)
  std::optional<NamedVector> qdd;    ///< spanning accelerations G ydd + g
  std::optional<NamedVector> tauId;  ///< inverse dynamics of the sample's ydd
  std::optional<NamedMatrix> H;      ///< independent mass matrix
  std::optional<NamedVector> C;      ///< bias: H ydd + C = tau
  /// Per implicit cluster (by the reference cluster name): G (rows spanning joints, cols
  /// independent joints) and g (by spanning joint) at this state.
  std::map<std::string, std::pair<NamedMatrix, NamedVector>> implicitGg;
  /// Quantities whose computation failed in this sample (quantity name -> library status
  /// message); they are reported as failed.
  std::map<std::string, std::string> failures;
};

/// Per-file state of the grbda computation: the cluster model, its workspace and the mapping
/// between the reference's names and the model's coordinates (filled by prepareGrbda()).
struct GrbdaContext {
  GrbdaFileInfo info;
  bool ready = false;
  /// The clustering the library built, in the reference's terms (links, joint names, reference
  /// cluster names where the link sets agree).
  std::optional<std::vector<GrbdaCluster>> clusters;

  std::unique_ptr<ClusterModel> model;  ///< heap: `data` keeps a pointer to it
  std::unique_ptr<ClusterData> data;
  int floatingBody = -1;                           ///< body of the floating joint, -1: fixed base
  std::vector<std::string> spanningVelocityNames;  ///< per spanning v index, reference name
  std::vector<std::string> independentNames;       ///< per y index, reference name
  /// Reference cluster name -> index in model->clusters (clusters with the same link set).
  std::map<std::string, int> clusterIndex;
};

/// Loads the cluster model of ctx.info.urdfPath (gravity of the file) and maps the reference's
/// names to it. Returns false with a reason in `why` when the grbda quantities cannot be
/// computed; throws ModelError for an invalid model and std::runtime_error when the model does
/// not match the file (coordinate names or counts).
bool prepareGrbda(GrbdaContext& ctx, std::string& why);

/// Computes the grbda quantities of one sample into `out`. Returns false with a reason in `why`
/// if nothing could be computed (e.g. the sample names a coordinate the model lacks).
bool computeGrbdaSample(GrbdaContext& ctx, const GrbdaSample& sample, GrbdaSampleResult& out,
                        std::string& why);

}  // namespace clusterdyn::verify
