// The array arguments of the C functions, described once (not installed; hidden visibility).
// A description lists a function's array arguments in signature order with the length the model
// requires of each; the single-state checks (checkArrays, capi_internal.hpp) and the batched
// jobs (capi_batch.cpp: stacked arrays, checked once before any state runs) both read it, so a
// length rule is written in one place. Order of the single-state checks: the description's,
// external forces last (they are copied into the workspace once every other argument passed).
#pragma once

#include <cstddef>

namespace cdyn_args {

/// The per-state length of an array argument, in the model's sizes.
enum class Len : unsigned char {
  Nq,    ///< spanning positions
  Nv,    ///< spanning velocities
  Ny,    ///< independent velocities
  Nyq,   ///< independent positions
  Fext,  ///< 6 x nbodies external forces
  NyNy,  ///< an ny x ny matrix (leading dimension ny in a batch)
  NvNv,  ///< an nv x nv matrix
  Rows,  ///< the constraint set's rows m
  MNy,   ///< an m x ny matrix (m: the constraint set's rows)
};

enum class Dir : unsigned char {
  In,
  Out,
  MatrixOut,  ///< a column-major output with a leading dimension: checked by checkMatrix
};

struct ArgSpec {
  const char* name;
  Len len;
  Dir dir;
  bool optional;  ///< (NULL, 0) means absent
};

/// The sizes a description is read against.
struct Sizes {
  int nq = 0, nv = 0, ny = 0, nyq = 0, nbodies = 0, rows = 0;
  constexpr int of(Len l) const {
    switch (l) {
      case Len::Nq:
        return nq;
      case Len::Nv:
        return nv;
      case Len::Ny:
        return ny;
      case Len::Nyq:
        return nyq;
      case Len::Fext:
        return 6 * nbodies;
      case Len::NyNy:
        return ny * ny;
      case Len::NvNv:
        return nv * nv;
      case Len::Rows:
        return rows;
      case Len::MNy:
        return rows * ny;
    }
    return -1;
  }
};

/// One array argument of a call as the caller passed it (outputs too: the pointer is written).
struct ArrayArg {
  const double* p;
  int n;
};

constexpr Dir In = Dir::In, Out = Dir::Out;
constexpr bool kOpt = true, kReq = false;

// ---- the descriptions (signature order) ------------------------------------------------------

/// cdyn_crba (M: nv x nv, leading dimension ldm >= max(1, nv), checked by cdyn_crba itself)
inline constexpr ArgSpec kCrba[] = {{"q", Len::Nq, In, kReq},
                                    {"M", Len::NvNv, Dir::MatrixOut, kReq}};
/// cdyn_nonlinear_effects
inline constexpr ArgSpec kNonlinearEffects[] = {
    {"q", Len::Nq, In, kReq}, {"v", Len::Nv, In, kReq}, {"nle", Len::Nv, Out, kReq}};
/// cdyn_generalized_gravity
inline constexpr ArgSpec kGeneralizedGravity[] = {{"q", Len::Nq, In, kReq},
                                                  {"g", Len::Nv, Out, kReq}};
/// cdyn_kinetic_energy
inline constexpr ArgSpec kKineticEnergy[] = {{"q", Len::Nq, In, kReq}, {"v", Len::Nv, In, kReq}};
/// cdyn_potential_energy
inline constexpr ArgSpec kPotentialEnergy[] = {{"q", Len::Nq, In, kReq}};
/// cdyn_integrate
inline constexpr ArgSpec kIntegrate[] = {
    {"q", Len::Nq, In, kReq}, {"v", Len::Nv, In, kReq}, {"qout", Len::Nq, Out, kReq}};
/// cdyn_integrate_independent
inline constexpr ArgSpec kIntegrateIndependent[] = {
    {"y", Len::Nyq, In, kReq}, {"ydot", Len::Ny, In, kReq}, {"yout", Len::Nyq, Out, kReq}};
/// cdyn_difference_independent
inline constexpr ArgSpec kDifferenceIndependent[] = {
    {"y0", Len::Nyq, In, kReq}, {"y1", Len::Nyq, In, kReq}, {"ydot", Len::Ny, Out, kReq}};
/// cdyn_cluster_bias
inline constexpr ArgSpec kClusterBias[] = {
    {"q", Len::Nq, In, kReq}, {"v", Len::Nv, In, kReq}, {"C", Len::Ny, Out, kReq}};
/// cdyn_solve_loop_closure (q_guess: read once the inputs are validated, capi_closure.cpp)
inline constexpr ArgSpec kSolveLoopClosure[] = {{"y", Len::Nyq, In, kReq},
                                                {"q", Len::Nq, Out, kReq}};
/// cdyn_independent_to_spanning (q_guess as in kSolveLoopClosure)
inline constexpr ArgSpec kIndependentToSpanning[] = {{"y", Len::Nyq, In, kReq},
                                                     {"ydot", Len::Ny, In, kReq},
                                                     {"q", Len::Nq, Out, kReq},
                                                     {"v", Len::Nv, Out, kReq}};
/// cdyn_spanning_to_independent
inline constexpr ArgSpec kSpanningToIndependent[] = {{"q", Len::Nq, In, kReq},
                                                     {"v", Len::Nv, In, kReq},
                                                     {"y", Len::Nyq, Out, kReq},
                                                     {"ydot", Len::Ny, Out, kReq}};
/// cdyn_project_to_constraints
inline constexpr ArgSpec kProjectToConstraints[] = {{"q", Len::Nq, In, kReq},
                                                    {"v", Len::Nv, In, kReq},
                                                    {"qout", Len::Nq, Out, kReq},
                                                    {"vout", Len::Nv, Out, kReq}};
/// cdyn_rnea
inline constexpr ArgSpec kRnea[] = {{"q", Len::Nq, In, kReq},
                                    {"v", Len::Nv, In, kReq},
                                    {"a", Len::Nv, In, kReq},
                                    {"fext", Len::Fext, In, kOpt},
                                    {"tau", Len::Nv, Out, kReq}};
/// cdyn_aba
inline constexpr ArgSpec kAba[] = {{"q", Len::Nq, In, kReq},
                                   {"v", Len::Nv, In, kReq},
                                   {"tau", Len::Nv, In, kReq},
                                   {"fext", Len::Fext, In, kOpt},
                                   {"ddq", Len::Nv, Out, kReq}};
/// cdyn_ce_aba, cdyn_batch_ce_aba, cdyn_pool_ce_aba
inline constexpr ArgSpec kCeAba[] = {{"q", Len::Nq, In, kReq},    {"v", Len::Nv, In, kReq},
                                     {"tau", Len::Ny, In, kReq},  {"fext", Len::Fext, In, kOpt},
                                     {"ydd", Len::Ny, Out, kReq}, {"qdd", Len::Nv, Out, kOpt}};
/// cdyn_ce_aba_spanning_forces (tau in spanning coordinates)
inline constexpr ArgSpec kCeAbaSpanningForces[] = {
    {"q", Len::Nq, In, kReq},      {"v", Len::Nv, In, kReq},    {"tau", Len::Nv, In, kReq},
    {"fext", Len::Fext, In, kOpt}, {"ydd", Len::Ny, Out, kReq}, {"qdd", Len::Nv, Out, kOpt}};
/// cdyn_ce_rnea, cdyn_batch_ce_rnea, cdyn_pool_ce_rnea
inline constexpr ArgSpec kCeRnea[] = {{"q", Len::Nq, In, kReq},    {"v", Len::Nv, In, kReq},
                                      {"ydd", Len::Ny, In, kReq},  {"fext", Len::Fext, In, kOpt},
                                      {"tau", Len::Ny, Out, kReq}, {"qdd", Len::Nv, Out, kOpt}};
/// cdyn_ce_aba_independent, cdyn_batch_ce_aba_independent, cdyn_pool_ce_aba_independent
/// (q_guess, one array for every state, is not stacked: see the batch job)
inline constexpr ArgSpec kCeAbaIndependent[] = {
    {"y", Len::Nyq, In, kReq},     {"ydot", Len::Ny, In, kReq}, {"tau", Len::Ny, In, kReq},
    {"fext", Len::Fext, In, kOpt}, {"ydd", Len::Ny, Out, kReq}, {"q", Len::Nq, Out, kOpt},
    {"v", Len::Nv, Out, kOpt},     {"qdd", Len::Nv, Out, kOpt}};
/// cdyn_cluster_mass_matrix, cdyn_batch_cluster_mass_matrix, cdyn_pool_cluster_mass_matrix
inline constexpr ArgSpec kClusterMassMatrix[] = {{"q", Len::Nq, In, kReq},
                                                 {"H", Len::NyNy, Dir::MatrixOut, kReq}};
/// cdyn_constrained_aba, cdyn_prox_pv, cdyn_constrained_dynamics_dense and their batches: lengths
/// from the model (no length arguments), m explicit.
inline constexpr ArgSpec kConstrainedSolve[] = {
    {"q", Len::Nq, In, kReq},        {"v", Len::Nv, In, kReq},    {"tau", Len::Ny, In, kReq},
    {"fext", Len::Fext, In, kOpt},   {"ydd", Len::Ny, Out, kReq}, {"qdd", Len::Nv, Out, kOpt},
    {"lambda", Len::Rows, Out, kReq}};

// ---- derivatives (capi_derivatives.cpp, capi_batch_derivatives.cpp) -------------------------
// The matrices (Dir::MatrixOut) share one leading dimension ld in a single call; in a batch each
// state's matrix is its n x n column-major elements (length NvNv / NyNy per state).

/// cdyn_rnea_derivatives, cdyn_batch_rnea_derivatives
inline constexpr ArgSpec kRneaDerivatives[] = {{"q", Len::Nq, In, kReq},
                                               {"v", Len::Nv, In, kReq},
                                               {"a", Len::Nv, In, kReq},
                                               {"fext", Len::Fext, In, kOpt},
                                               {"tau", Len::Nv, Out, kOpt},
                                               {"dtau_dq", Len::NvNv, Dir::MatrixOut, kReq},
                                               {"dtau_dv", Len::NvNv, Dir::MatrixOut, kReq},
                                               {"dtau_da", Len::NvNv, Dir::MatrixOut, kOpt}};
/// cdyn_aba_derivatives, cdyn_batch_aba_derivatives
inline constexpr ArgSpec kAbaDerivatives[] = {{"q", Len::Nq, In, kReq},
                                              {"v", Len::Nv, In, kReq},
                                              {"tau", Len::Nv, In, kReq},
                                              {"fext", Len::Fext, In, kOpt},
                                              {"ddq", Len::Nv, Out, kOpt},
                                              {"ddq_dq", Len::NvNv, Dir::MatrixOut, kReq},
                                              {"ddq_dv", Len::NvNv, Dir::MatrixOut, kReq},
                                              {"Minv", Len::NvNv, Dir::MatrixOut, kOpt}};
/// cdyn_minverse, cdyn_batch_minverse
inline constexpr ArgSpec kMinverse[] = {{"q", Len::Nq, In, kReq},
                                        {"Minv", Len::NvNv, Dir::MatrixOut, kReq}};
/// cdyn_ce_rnea_derivatives, cdyn_batch_ce_rnea_derivatives
inline constexpr ArgSpec kCeRneaDerivatives[] = {{"q", Len::Nq, In, kReq},
                                                 {"v", Len::Nv, In, kReq},
                                                 {"ydd", Len::Ny, In, kReq},
                                                 {"fext", Len::Fext, In, kOpt},
                                                 {"tau", Len::Ny, Out, kOpt},
                                                 {"dtau_dy", Len::NyNy, Dir::MatrixOut, kReq},
                                                 {"dtau_dydot", Len::NyNy, Dir::MatrixOut, kReq},
                                                 {"H", Len::NyNy, Dir::MatrixOut, kOpt}};
/// cdyn_ce_aba_derivatives, cdyn_batch_ce_aba_derivatives
inline constexpr ArgSpec kCeAbaDerivatives[] = {{"q", Len::Nq, In, kReq},
                                                {"v", Len::Nv, In, kReq},
                                                {"tau", Len::Ny, In, kReq},
                                                {"fext", Len::Fext, In, kOpt},
                                                {"ydd", Len::Ny, Out, kOpt},
                                                {"dydd_dy", Len::NyNy, Dir::MatrixOut, kReq},
                                                {"dydd_dydot", Len::NyNy, Dir::MatrixOut, kReq},
                                                {"Hinv", Len::NyNy, Dir::MatrixOut, kOpt}};
/// cdyn_cluster_minverse, cdyn_batch_cluster_minverse
inline constexpr ArgSpec kClusterMinverse[] = {{"q", Len::Nq, In, kReq},
                                               {"Hinv", Len::NyNy, Dir::MatrixOut, kReq}};
/// cdyn_difference
inline constexpr ArgSpec kDifference[] = {
    {"q0", Len::Nq, In, kReq}, {"q1", Len::Nq, In, kReq}, {"v", Len::Nv, Out, kReq}};
// ---- contacts (capi_contact.cpp, capi_contact_batch.cpp; Rows: the contact problem's m) -----

/// cdyn_contact_solve
inline constexpr ArgSpec kContactSolve[] = {{"q", Len::Nq, In, kReq},
                                            {"v", Len::Nv, In, kReq},
                                            {"tau", Len::Ny, In, kReq},
                                            {"lambda", Len::Rows, Out, kReq}};
/// cdyn_contact_step
inline constexpr ArgSpec kContactStep[] = {
    {"q", Len::Nq, In, kReq},     {"v", Len::Nv, In, kReq},     {"tau", Len::Ny, In, kReq},
    {"qout", Len::Nq, Out, kReq}, {"vout", Len::Nv, Out, kReq}, {"lambda", Len::Rows, Out, kOpt}};
/// cdyn_batch_contact_rollout, cdyn_pool_contact_rollout: lengths per state and step
inline constexpr ArgSpec kContactRollout[] = {
    {"q0", Len::Nq, In, kReq}, {"v0", Len::Nv, In, kReq}, {"tau", Len::Ny, In, kReq},
    {"q", Len::Nq, Out, kReq}, {"v", Len::Nv, Out, kReq}, {"lambda", Len::Rows, Out, kOpt}};

// ---- constrained-dynamics derivatives (capi_constrained_derivatives.cpp) --------------------
// The ny x ny matrices share the leading dimension ld_y, the m x ny ones ld_m.

/// cdyn_constrained_dynamics_derivatives
inline constexpr ArgSpec kConstrainedDerivatives[] = {
    {"q", Len::Nq, In, kReq},
    {"v", Len::Nv, In, kReq},
    {"tau", Len::Ny, In, kReq},
    {"fext", Len::Fext, In, kOpt},
    {"ydd", Len::Ny, Out, kOpt},
    {"lambda", Len::Rows, Out, kOpt},
    {"dydd_dy", Len::NyNy, Dir::MatrixOut, kReq},
    {"dydd_dydot", Len::NyNy, Dir::MatrixOut, kReq},
    {"dydd_dtau", Len::NyNy, Dir::MatrixOut, kOpt},
    {"dlambda_dy", Len::MNy, Dir::MatrixOut, kOpt},
    {"dlambda_dydot", Len::MNy, Dir::MatrixOut, kOpt},
    {"dlambda_dtau", Len::MNy, Dir::MatrixOut, kOpt}};

template <typename T, std::size_t N>
constexpr int count(const T (&)[N]) {
  return static_cast<int>(N);
}

}  // namespace cdyn_args
