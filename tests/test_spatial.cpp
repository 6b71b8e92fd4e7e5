// Tests of the header-only spatial algebra (spatial.hpp, transform.hpp, inertia.hpp).
//
// Every operation is checked against its explicit 6x6 matrix form, written out independently in
// this file from Featherstone, "Rigid Body Dynamics Algorithms" (2008), ch. 2:
//   rot(E) = [E 0; 0 E],  xlt(r) = [1 0; -rx 1],  B_X_A = rot(E) xlt(r)          (eq. 2.24-2.26)
//   B_X_A^* = [E -E rx; 0 E] = B_X_A^{-T}                                        (eq. 2.27-2.28)
//   crm(v) = [wx 0; vx wx],  crf(v) = [wx vx; 0 wx] = -crm(v)^T                  (eq. 2.31-2.32)
//   mcI(m, c, Ic) = [Ic + m cx cx^T  m cx; m cx^T  m 1]                           (eq. 2.63)
//   I_A = A_X_B^* I_B B_X_A = (B_X_A)^T I_B (B_X_A)                               (eq. 2.66)
// The library's own toXxxMatrix()/matrix() helpers are never used as oracles; they are only
// checked against the independent formulas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/spatial.hpp"
#include "clusterdyn/transform.hpp"

namespace {

using clusterdyn::Force;
using clusterdyn::Mat3;
using clusterdyn::Mat6;
using clusterdyn::Motion;
using clusterdyn::SpatialInertia;
using clusterdyn::Transform;
using clusterdyn::Vec3;
using clusterdyn::Vec6;

constexpr int kTrials = 50;
constexpr double kTol = 1e-12;
constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------------------------
// Comparison helper: max |a - b| <= tol * (1 + max(|a|, |b|)), i.e. absolute near zero and
// relative for large entries.
template <typename A, typename B>
::testing::AssertionResult Near(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b,
                                double tol = kTol) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    return ::testing::AssertionFailure() << "size mismatch";
  }
  const double diff = (a - b).cwiseAbs().maxCoeff();
  const double scale = 1.0 + std::max(a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff());
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os << "max abs difference " << diff << " > " << tol * scale << "\nactual:\n"
     << a << "\nexpected:\n"
     << b;
  return ::testing::AssertionFailure() << os.str();
}

::testing::AssertionResult NearScalar(double a, double b, double tol = kTol) {
  const double diff = std::abs(a - b);
  const double scale = 1.0 + std::max(std::abs(a), std::abs(b));
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << " (diff " << diff << ")";
}

// ---------------------------------------------------------------------------------------------
// Random inputs (fixed seed per test).
class Rng {
 public:
  explicit Rng(unsigned seed) : gen_(seed) {}
  double Uniform(double lo = -1.0, double hi = 1.0) {
    return std::uniform_real_distribution<double>(lo, hi)(gen_);
  }
  Vec3 V3(double s = 1.0) { return Vec3(Uniform(-s, s), Uniform(-s, s), Uniform(-s, s)); }
  Vec6 V6(double s = 1.0) {
    Vec6 v;
    for (int i = 0; i < 6; ++i) v(i) = Uniform(-s, s);
    return v;
  }
  Mat3 M3(double s = 1.0) {
    Mat3 m;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m(i, j) = Uniform(-s, s);
    return m;
  }
  Mat6 M6(double s = 1.0) {
    Mat6 m;
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) m(i, j) = Uniform(-s, s);
    return m;
  }
  Mat6 SymmetricM6(double s = 1.0) {
    const Mat6 a = M6(s);
    return 0.5 * (a + a.transpose());
  }
  // Symmetric positive-definite 3x3 (a plausible rotational inertia).
  Mat3 Spd3() {
    const Mat3 l = M3();
    return l * l.transpose() + 0.1 * Mat3::Identity();
  }
  // Uniformly distributed rotation from a normalised Gaussian quaternion.
  Mat3 Rotation() {
    std::normal_distribution<double> n(0.0, 1.0);
    Eigen::Quaterniond q(n(gen_), n(gen_), n(gen_), n(gen_));
    q.normalize();
    return q.toRotationMatrix();
  }
  Transform Pose() { return Transform(Rotation(), V3(2.0)); }

 private:
  std::mt19937 gen_;
};

// ---------------------------------------------------------------------------------------------
// Independent oracles, written entry by entry from the book.
Mat3 Sk(const Vec3& a) {
  Mat3 s;
  s(0, 0) = 0.0;
  s(0, 1) = -a(2);
  s(0, 2) = a(1);
  s(1, 0) = a(2);
  s(1, 1) = 0.0;
  s(1, 2) = -a(0);
  s(2, 0) = -a(1);
  s(2, 1) = a(0);
  s(2, 2) = 0.0;
  return s;
}

Mat3 Cross3(const Vec3& a) {  // the same skew, built column-wise from cross products
  Mat3 s;
  for (int j = 0; j < 3; ++j) s.col(j) = a.cross(Vec3::Unit(j));
  return s;
}

// Elementary (active) rotations about the coordinate axes.
Mat3 RotX(double t) {
  const double c = std::cos(t), s = std::sin(t);
  Mat3 m;
  m << 1, 0, 0, 0, c, -s, 0, s, c;
  return m;
}
Mat3 RotY(double t) {
  const double c = std::cos(t), s = std::sin(t);
  Mat3 m;
  m << c, 0, s, 0, 1, 0, -s, 0, c;
  return m;
}
Mat3 RotZ(double t) {
  const double c = std::cos(t), s = std::sin(t);
  Mat3 m;
  m << c, -s, 0, s, c, 0, 0, 0, 1;
  return m;
}

Mat6 BlockMat(const Mat3& a, const Mat3& b, const Mat3& c, const Mat3& d) {
  Mat6 m;
  m.block<3, 3>(0, 0) = a;
  m.block<3, 3>(0, 3) = b;
  m.block<3, 3>(3, 0) = c;
  m.block<3, 3>(3, 3) = d;
  return m;
}

const Mat3 kI3 = Mat3::Identity();
const Mat3 kZ3 = Mat3::Zero();

// rot(E): coordinate rotation (E maps A coordinates to B coordinates).
Mat6 Rot6(const Mat3& e) { return BlockMat(e, kZ3, kZ3, e); }
// xlt(r): coordinate translation by r (B origin expressed in A coordinates).
Mat6 Xlt6(const Vec3& r) { return BlockMat(kI3, kZ3, -Sk(r), kI3); }
// Force counterparts: rot*(E) = rot(E), xlt*(r) = [1 -rx; 0 1].
Mat6 XltForce6(const Vec3& r) { return BlockMat(kI3, -Sk(r), kZ3, kI3); }

// For the pose aMb = (R, p): E = R^T, r = p.
Mat6 BXA(const Transform& aMb) { return Rot6(aMb.R.transpose()) * Xlt6(aMb.p); }
// A_X_B = B_X_A^{-1} = xlt(-r) rot(E^T).
Mat6 AXB(const Transform& aMb) { return Xlt6(-aMb.p) * Rot6(aMb.R); }
// B_X_A^* = rot(E) xlt*(r).
Mat6 BXAForce(const Transform& aMb) { return Rot6(aMb.R.transpose()) * XltForce6(aMb.p); }
// A_X_B^* = xlt*(-r) rot(E^T).
Mat6 AXBForce(const Transform& aMb) { return XltForce6(-aMb.p) * Rot6(aMb.R); }

Mat6 Crm(const Vec6& v) {
  const Mat3 w = Sk(v.head<3>()), l = Sk(v.tail<3>());
  return BlockMat(w, kZ3, l, w);
}
Mat6 Crf(const Vec6& v) {
  const Mat3 w = Sk(v.head<3>()), l = Sk(v.tail<3>());
  return BlockMat(w, l, kZ3, w);
}

Mat6 McI(double m, const Vec3& c, const Mat3& ic) {
  const Mat3 cx = Sk(c);
  return BlockMat(ic + m * cx * cx.transpose(), m * cx, m * cx.transpose(), m * kI3);
}

Mat6 Congruence(const Mat6& x, const Mat6& i) { return x.transpose() * i * x; }

// ---------------------------------------------------------------------------------------------
// Oracle self-checks (so that a wrong oracle cannot silently agree with a wrong header).
TEST(Oracle, SelfConsistency) {
  Rng rng(1);
  for (int t = 0; t < kTrials; ++t) {
    const Vec3 a = rng.V3(), b = rng.V3();
    EXPECT_TRUE(Near(Sk(a), Cross3(a)));
    EXPECT_TRUE(Near(Sk(a) * b, a.cross(b)));
    const Transform T = rng.Pose();
    EXPECT_TRUE(Near(AXB(T) * BXA(T), Mat6::Identity()));
    EXPECT_TRUE(Near(BXA(T).inverse(), AXB(T), 1e-10));
    EXPECT_TRUE(Near(BXAForce(T), Mat6(BXA(T).inverse().transpose()), 1e-10));
    EXPECT_TRUE(Near(AXBForce(T), Mat6(BXA(T).transpose())));
    const Vec6 v = rng.V6();
    EXPECT_TRUE(Near(Crf(v), Mat6(-Crm(v).transpose())));
    EXPECT_TRUE(Near(RotX(0.3) * RotX(-0.3), kI3));
    EXPECT_TRUE(Near(RotZ(kPi / 2) * Vec3::UnitX(), Vec3::UnitY()));
    EXPECT_TRUE(Near(RotX(kPi / 2) * Vec3::UnitY(), Vec3::UnitZ()));
    EXPECT_TRUE(Near(RotY(kPi / 2) * Vec3::UnitZ(), Vec3::UnitX()));
  }
}

// ---------------------------------------------------------------------------------------------
// spatial.hpp
TEST(Spatial, Skew) {
  Rng rng(2);
  for (int t = 0; t < kTrials; ++t) {
    const Vec3 a = rng.V3(3.0), b = rng.V3(3.0);
    const Mat3 s = clusterdyn::skew(a);
    EXPECT_TRUE(Near(s, Sk(a)));
    EXPECT_TRUE(Near(s, Cross3(a)));
    EXPECT_TRUE(Near(Vec3(s * b), a.cross(b)));
    EXPECT_TRUE(Near(Mat3(s + s.transpose()), kZ3));
    EXPECT_TRUE(Near(Vec3(s * a), Vec3::Zero()));
  }
}

TEST(Spatial, CrossMotionMatchesCrm) {
  Rng rng(3);
  for (int t = 0; t < kTrials; ++t) {
    const Motion v = rng.V6(2.0), m = rng.V6(2.0);
    EXPECT_TRUE(Near(clusterdyn::crossMotion(v, m), Vec6(Crm(v) * m)));
    EXPECT_TRUE(Near(clusterdyn::crossMotionMatrix(v), Crm(v)));
    // v x v = 0 and antisymmetry v x m = -(m x v).
    EXPECT_TRUE(Near(clusterdyn::crossMotion(v, v), Vec6::Zero()));
    EXPECT_TRUE(Near(clusterdyn::crossMotion(v, m), Vec6(-clusterdyn::crossMotion(m, v))));
  }
}

TEST(Spatial, CrossForceMatchesCrf) {
  Rng rng(4);
  for (int t = 0; t < kTrials; ++t) {
    const Motion v = rng.V6(2.0);
    const Force f = rng.V6(2.0);
    const Motion m = rng.V6(2.0);
    EXPECT_TRUE(Near(clusterdyn::crossForce(v, f), Vec6(Crf(v) * f)));
    EXPECT_TRUE(Near(clusterdyn::crossForceMatrix(v), Crf(v)));
    // crf(v) = -crm(v)^T, both with the oracle and with the library matrix.
    EXPECT_TRUE(Near(Crf(v), Mat6(-Crm(v).transpose())));
    EXPECT_TRUE(
        Near(clusterdyn::crossForceMatrix(v), Mat6(-clusterdyn::crossMotionMatrix(v).transpose())));
    // Duality: (v x m) . f = -m . (v x* f).
    EXPECT_TRUE(
        NearScalar(clusterdyn::crossMotion(v, m).dot(f), -m.dot(clusterdyn::crossForce(v, f))));
    // v x* (I v) is not zero in general, but v . (v x* f) = 0 for any f.
    EXPECT_TRUE(NearScalar(v.dot(clusterdyn::crossForce(v, f)), 0.0));
  }
}

TEST(Spatial, CrossProductsCommuteWithTransforms) {
  // X (v x m) = (X v) x (X m) and X* (v x* f) = (X v) x* (X* f).
  Rng rng(5);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Motion v = rng.V6(), m = rng.V6();
    const Force f = rng.V6();
    const Mat6 X = BXA(T), Xf = BXAForce(T);
    EXPECT_TRUE(
        Near(Vec6(X * clusterdyn::crossMotion(v, m)), clusterdyn::crossMotion(X * v, X * m)));
    EXPECT_TRUE(
        Near(Vec6(Xf * clusterdyn::crossForce(v, f)), clusterdyn::crossForce(X * v, Xf * f)));
  }
}

TEST(Spatial, RpyToMatrixUrdfConvention) {
  Rng rng(6);
  for (int t = 0; t < kTrials; ++t) {
    const double roll = rng.Uniform(-kPi, kPi);
    const double pitch = rng.Uniform(-kPi / 2, kPi / 2);
    const double yaw = rng.Uniform(-kPi, kPi);
    const Mat3 R = clusterdyn::rpyToMatrix(Vec3(roll, pitch, yaw));
    EXPECT_TRUE(Near(R, Mat3(RotZ(yaw) * RotY(pitch) * RotX(roll))));
    EXPECT_TRUE(Near(Mat3(R * R.transpose()), kI3));
    EXPECT_TRUE(NearScalar(R.determinant(), 1.0));
    // Single-axis cases.
    EXPECT_TRUE(Near(clusterdyn::rpyToMatrix(Vec3(roll, 0, 0)), RotX(roll)));
    EXPECT_TRUE(Near(clusterdyn::rpyToMatrix(Vec3(0, pitch, 0)), RotY(pitch)));
    EXPECT_TRUE(Near(clusterdyn::rpyToMatrix(Vec3(0, 0, yaw)), RotZ(yaw)));
  }
  // Explicit closed form (URDF spec / ROS tf) for one fixed triple.
  const double r = 0.3, p = -0.7, y = 1.9;
  const double cr = std::cos(r), sr = std::sin(r), cp = std::cos(p), sp = std::sin(p),
               cy = std::cos(y), sy = std::sin(y);
  Mat3 expected;
  expected << cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,  //
      sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,          //
      -sp, cp * sr, cp * cr;
  EXPECT_TRUE(Near(clusterdyn::rpyToMatrix(Vec3(r, p, y)), expected));
  EXPECT_TRUE(Near(clusterdyn::rpyToMatrix(Vec3::Zero()), kI3));
}

// ---------------------------------------------------------------------------------------------
// transform.hpp
TEST(Transform, DefaultIsIdentity) {
  const Transform a, b = Transform::Identity();
  EXPECT_TRUE(Near(a.R, kI3));
  EXPECT_TRUE(Near(a.p, Vec3::Zero()));
  EXPECT_TRUE(a.isApprox(b));
  Rng rng(7);
  const Motion m = rng.V6();
  EXPECT_TRUE(Near(a.actMotion(m), m));
  EXPECT_TRUE(Near(a.actInvMotion(m), m));
  EXPECT_TRUE(Near(a.actForce(m), m));
  EXPECT_TRUE(Near(a.actInvForce(m), m));
}

TEST(Transform, MotionMatchesSixBySix) {
  Rng rng(8);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Motion m = rng.V6(2.0);
    EXPECT_TRUE(Near(T.actInvMotion(m), Vec6(BXA(T) * m)));
    EXPECT_TRUE(Near(T.actMotion(m), Vec6(AXB(T) * m)));
    // Round trips.
    EXPECT_TRUE(Near(T.actInvMotion(T.actMotion(m)), m));
    EXPECT_TRUE(Near(T.actMotion(T.actInvMotion(m)), m));
    // Library matrix helpers against the oracle.
    EXPECT_TRUE(Near(T.toActInvMotionMatrix(), BXA(T)));
    EXPECT_TRUE(Near(T.toActMotionMatrix(), AXB(T)));
  }
}

TEST(Transform, ForceMatchesSixBySix) {
  Rng rng(9);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Force f = rng.V6(2.0);
    EXPECT_TRUE(Near(T.actInvForce(f), Vec6(BXAForce(T) * f)));
    EXPECT_TRUE(Near(T.actForce(f), Vec6(AXBForce(T) * f)));
    // As documented: actForce is (B_X_A)^T.
    EXPECT_TRUE(Near(T.actForce(f), Vec6(BXA(T).transpose() * f)));
    EXPECT_TRUE(Near(T.actInvForce(T.actForce(f)), f));
    EXPECT_TRUE(Near(T.actForce(T.actInvForce(f)), f));
  }
}

TEST(Transform, ForceMotionDuality) {
  Rng rng(10);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    // Force transform = inverse transpose of motion transform (column by column, through the
    // library's vector operations only).
    Mat6 actInvMotionMat, actInvForceMat, actMotionMat, actForceMat;
    for (int j = 0; j < 6; ++j) {
      const Vec6 e = Vec6::Unit(j);
      actInvMotionMat.col(j) = T.actInvMotion(e);
      actInvForceMat.col(j) = T.actInvForce(e);
      actMotionMat.col(j) = T.actMotion(e);
      actForceMat.col(j) = T.actForce(e);
    }
    EXPECT_TRUE(Near(actInvForceMat, Mat6(actInvMotionMat.inverse().transpose()), 1e-10));
    EXPECT_TRUE(Near(actForceMat, Mat6(actMotionMat.inverse().transpose()), 1e-10));
    EXPECT_TRUE(Near(actForceMat, Mat6(actInvMotionMat.transpose())));
    EXPECT_TRUE(Near(actInvForceMat, Mat6(actMotionMat.transpose())));
    // Power invariance: f . m is frame independent.
    const Motion m = rng.V6(2.0);
    const Force f = rng.V6(2.0);
    EXPECT_TRUE(NearScalar(T.actInvForce(f).dot(T.actInvMotion(m)), f.dot(m)));
    EXPECT_TRUE(NearScalar(T.actForce(f).dot(T.actMotion(m)), f.dot(m)));
  }
}

TEST(Transform, MotionIsRigidBodyVelocityField) {
  // Geometric meaning: a body with spatial velocity m_B (B coords) moves the point x (B coords)
  // with velocity v + w x x. The same physical velocity in A coords must match.
  Rng rng(11);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Motion mB = rng.V6(2.0);
    const Vec3 x = rng.V3(2.0);
    const Vec3 velB = mB.tail<3>() + mB.head<3>().cross(x);
    const Motion mA = T.actMotion(mB);
    const Vec3 velA = mA.tail<3>() + mA.head<3>().cross(T.actPoint(x));
    EXPECT_TRUE(Near(velA, Vec3(T.R * velB)));
    // Likewise a pure force f through point x (B coords) has moment x x f about B's origin.
    const Vec3 fB = rng.V3();
    Force wrenchB;
    wrenchB << x.cross(fB), fB;
    const Force wrenchA = T.actForce(wrenchB);
    const Vec3 fA = T.R * fB;
    EXPECT_TRUE(Near(wrenchA.tail<3>(), fA));
    EXPECT_TRUE(Near(wrenchA.head<3>(), T.actPoint(x).cross(fA)));
  }
}

TEST(Transform, ActPoint) {
  Rng rng(12);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Vec3 x = rng.V3(3.0);
    Eigen::Vector4d xh;
    xh << x, 1.0;
    Eigen::Matrix4d H = Eigen::Matrix4d::Identity();
    H.topLeftCorner<3, 3>() = T.R;
    H.topRightCorner<3, 1>() = T.p;
    EXPECT_TRUE(Near(T.actPoint(x), Vec3((H * xh).head<3>())));
    EXPECT_TRUE(Near(T.actPoint(Vec3::Zero()), T.p));
    EXPECT_TRUE(Near(T.inverse().actPoint(T.actPoint(x)), x));
  }
}

TEST(Transform, Composition) {
  Rng rng(13);
  for (int t = 0; t < kTrials; ++t) {
    const Transform aMb = rng.Pose(), bMc = rng.Pose();
    const Transform aMc = aMb * bMc;
    const Vec3 x = rng.V3(2.0);
    EXPECT_TRUE(Near(aMc.actPoint(x), aMb.actPoint(bMc.actPoint(x))));
    EXPECT_TRUE(Near(aMc.R, Mat3(aMb.R * bMc.R)));
    EXPECT_TRUE(Near(aMc.p, Vec3(aMb.p + aMb.R * bMc.p)));
    // 6x6: C_X_A = C_X_B B_X_A and A_X_C = A_X_B B_X_C.
    EXPECT_TRUE(Near(BXA(aMc), Mat6(BXA(bMc) * BXA(aMb))));
    EXPECT_TRUE(Near(AXB(aMc), Mat6(AXB(aMb) * AXB(bMc))));
    const Motion m = rng.V6();
    const Force f = rng.V6();
    EXPECT_TRUE(Near(aMc.actMotion(m), aMb.actMotion(bMc.actMotion(m))));
    EXPECT_TRUE(Near(aMc.actInvMotion(m), bMc.actInvMotion(aMb.actInvMotion(m))));
    EXPECT_TRUE(Near(aMc.actForce(f), aMb.actForce(bMc.actForce(f))));
    EXPECT_TRUE(Near(aMc.actInvForce(f), bMc.actInvForce(aMb.actInvForce(f))));
    // Associativity and identity.
    const Transform cMd = rng.Pose();
    EXPECT_TRUE(((aMb * bMc) * cMd).isApprox(aMb * (bMc * cMd)));
    EXPECT_TRUE((aMb * Transform::Identity()).isApprox(aMb));
    EXPECT_TRUE((Transform::Identity() * aMb).isApprox(aMb));
  }
}

TEST(Transform, Inverse) {
  Rng rng(14);
  for (int t = 0; t < kTrials; ++t) {
    const Transform T = rng.Pose();
    const Transform Ti = T.inverse();
    EXPECT_TRUE((T * Ti).isApprox(Transform::Identity()));
    EXPECT_TRUE((Ti * T).isApprox(Transform::Identity()));
    EXPECT_TRUE(Ti.inverse().isApprox(T));
    EXPECT_TRUE(Near(Ti.R, Mat3(T.R.transpose())));
    EXPECT_TRUE(Near(Ti.p, Vec3(-T.R.transpose() * T.p)));
    // The 6x6 of the inverse pose is the inverse 6x6 (B_X_A for bMa is A_X_B for aMb).
    EXPECT_TRUE(Near(BXA(Ti), AXB(T)));
    EXPECT_TRUE(Near(BXA(Ti), Mat6(BXA(T).inverse()), 1e-10));
    const Motion m = rng.V6();
    const Force f = rng.V6();
    EXPECT_TRUE(Near(Ti.actMotion(m), T.actInvMotion(m)));
    EXPECT_TRUE(Near(Ti.actInvMotion(m), T.actMotion(m)));
    EXPECT_TRUE(Near(Ti.actForce(f), T.actInvForce(f)));
    EXPECT_TRUE(Near(Ti.actInvForce(f), T.actForce(f)));
  }
}

TEST(Transform, InPlaceAssignmentIsSafe) {
  Rng rng(15);
  const Transform T = rng.Pose();
  const Vec6 v0 = rng.V6();
  Vec6 v = v0;
  v = T.actMotion(v);
  EXPECT_TRUE(Near(v, Vec6(AXB(T) * v0)));
  v = v0;
  v = T.actInvMotion(v);
  EXPECT_TRUE(Near(v, Vec6(BXA(T) * v0)));
  v = v0;
  v = T.actForce(v);
  EXPECT_TRUE(Near(v, Vec6(AXBForce(T) * v0)));
  v = v0;
  v = T.actInvForce(v);
  EXPECT_TRUE(Near(v, Vec6(BXAForce(T) * v0)));
}

TEST(Transform, IsApprox) {
  Rng rng(16);
  const Transform T = rng.Pose();
  Transform U = T;
  EXPECT_TRUE(T.isApprox(U));
  U.p.x() += 1e-6;
  EXPECT_FALSE(T.isApprox(U));
  EXPECT_TRUE(T.isApprox(U, 1e-5));
  U = T;
  U.R(1, 2) += 1e-6;
  EXPECT_FALSE(T.isApprox(U));
}

TEST(Transform, ActInertiaIsCongruence) {
  Rng rng(17);
  for (int t = 0; t < kTrials; ++t) {
    const Transform aMb = rng.Pose();
    // General symmetric matrix (not necessarily a rigid-body inertia).
    const Mat6 I = rng.SymmetricM6(3.0);
    const Mat6 expected = Congruence(BXA(aMb), I);
    const Mat6 got = clusterdyn::actInertia(aMb, I);
    EXPECT_TRUE(Near(got, expected));
    EXPECT_TRUE(Near(got, Mat6(got.transpose())));
    // Same thing as A_X_B^* I B_X_A.
    EXPECT_TRUE(Near(got, Mat6(AXBForce(aMb) * I * BXA(aMb))));
    // Rigid-body inertia and kinetic-energy invariance.
    const Mat6 Ib = McI(rng.Uniform(0.1, 5.0), rng.V3(), rng.Spd3());
    const Mat6 Ia = clusterdyn::actInertia(aMb, Ib);
    EXPECT_TRUE(Near(Ia, Congruence(BXA(aMb), Ib)));
    const Motion vA = rng.V6();
    const Motion vB = aMb.actInvMotion(vA);
    EXPECT_TRUE(NearScalar(vA.dot(Ia * vA), vB.dot(Ib * vB)));
    // Momentum covariance: h_A = A_X_B^* h_B.
    EXPECT_TRUE(Near(Vec6(Ia * vA), aMb.actForce(Ib * vB)));
  }
  // Composition: actInertia(aMb * bMc, I) == actInertia(aMb, actInertia(bMc, I)).
  for (int t = 0; t < kTrials; ++t) {
    const Transform aMb = rng.Pose(), bMc = rng.Pose();
    const Mat6 I = rng.SymmetricM6();
    EXPECT_TRUE(Near(clusterdyn::actInertia(aMb * bMc, I),
                     clusterdyn::actInertia(aMb, clusterdyn::actInertia(bMc, I))));
  }
}

// ---------------------------------------------------------------------------------------------
// inertia.hpp
struct RandomBody {
  double m;
  Vec3 c;
  Mat3 Ic;
};

RandomBody MakeBody(Rng& rng) { return {rng.Uniform(0.1, 5.0), rng.V3(1.5), rng.Spd3()}; }

TEST(SpatialInertia, DefaultIsZero) {
  const SpatialInertia I;
  EXPECT_EQ(I.mass, 0.0);
  EXPECT_TRUE(Near(I.h, Vec3::Zero()));
  EXPECT_TRUE(Near(I.Io, kZ3));
  EXPECT_TRUE(Near(I.com(), Vec3::Zero()));
  EXPECT_TRUE(Near(I.inertiaAboutCom(), kZ3));
}

TEST(SpatialInertia, FromMassComInertiaMatchesMcI) {
  Rng rng(18);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b = MakeBody(rng);
    const SpatialInertia I = SpatialInertia::fromMassComInertia(b.m, b.c, b.Ic);
    const Mat6 oracle = McI(b.m, b.c, b.Ic);
    EXPECT_EQ(I.mass, b.m);
    EXPECT_TRUE(Near(I.h, Vec3(b.m * b.c)));
    EXPECT_TRUE(Near(I.com(), b.c));
    // Parallel-axis theorem written without skew: Io = Ic + m (|c|^2 1 - c c^T).
    EXPECT_TRUE(Near(I.Io, Mat3(b.Ic + b.m * (b.c.squaredNorm() * kI3 - b.c * b.c.transpose()))));
    EXPECT_TRUE(Near(I.matrix(), oracle));
    // The oracle's blocks as stored fields.
    EXPECT_TRUE(Near(I.Io, Mat3(oracle.topLeftCorner<3, 3>())));
    EXPECT_TRUE(Near(Mat3(oracle.topRightCorner<3, 3>()), Sk(I.h)));
  }
}

TEST(SpatialInertia, ProductMatchesMatrix) {
  Rng rng(19);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b = MakeBody(rng);
    const SpatialInertia I = SpatialInertia::fromMassComInertia(b.m, b.c, b.Ic);
    const Motion v = rng.V6(2.0);
    EXPECT_TRUE(Near(I * v, Vec6(McI(b.m, b.c, b.Ic) * v)));
    // Physical check: linear momentum = m * (velocity of the COM).
    const Vec3 vc = v.tail<3>() + v.head<3>().cross(b.c);
    EXPECT_TRUE(Near(Vec3((I * v).tail<3>()), Vec3(b.m * vc)));
    // Angular momentum about the origin = Ic w + c x (m vc).
    EXPECT_TRUE(Near(Vec3((I * v).head<3>()), Vec3(b.Ic * v.head<3>() + b.c.cross(b.m * vc))));
  }
}

TEST(SpatialInertia, AddTo) {
  Rng rng(20);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b = MakeBody(rng);
    const SpatialInertia I = SpatialInertia::fromMassComInertia(b.m, b.c, b.Ic);
    const Mat6 M0 = rng.M6(3.0);
    Mat6 M = M0;
    I.addTo(M);
    EXPECT_TRUE(Near(M, Mat6(M0 + McI(b.m, b.c, b.Ic))));
    Mat6 Z = Mat6::Zero();
    I.addTo(Z);
    EXPECT_TRUE(Near(Z, McI(b.m, b.c, b.Ic)));
  }
}

TEST(SpatialInertia, TransformedByIsCongruence) {
  Rng rng(21);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b = MakeBody(rng);
    const Transform aMb = rng.Pose();
    const SpatialInertia Ib = SpatialInertia::fromMassComInertia(b.m, b.c, b.Ic);
    const SpatialInertia Ia = Ib.transformedBy(aMb);
    const Mat6 expected = Congruence(BXA(aMb), McI(b.m, b.c, b.Ic));
    EXPECT_TRUE(Near(Ia.matrix(), expected));
    // Physics: same body with COM R c + p and rotated COM inertia R Ic R^T.
    EXPECT_TRUE(Near(Ia.matrix(), McI(b.m, aMb.actPoint(b.c), aMb.R * b.Ic * aMb.R.transpose())));
    EXPECT_EQ(Ia.mass, b.m);
    EXPECT_TRUE(Near(Ia.com(), aMb.actPoint(b.c)));
    EXPECT_TRUE(Near(Ia.inertiaAboutCom(), Mat3(aMb.R * b.Ic * aMb.R.transpose())));
    // Agrees with the generic actInertia and with the product form.
    EXPECT_TRUE(Near(Ia.matrix(), clusterdyn::actInertia(aMb, Ib.matrix())));
    const Motion vA = rng.V6();
    EXPECT_TRUE(Near(Ia * vA, aMb.actForce(Ib * aMb.actInvMotion(vA))));
    // Round trip.
    EXPECT_TRUE(Near(Ia.transformedBy(aMb.inverse()).matrix(), Ib.matrix()));
  }
}

TEST(SpatialInertia, InertiaAboutCom) {
  Rng rng(22);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b = MakeBody(rng);
    const SpatialInertia I = SpatialInertia::fromMassComInertia(b.m, b.c, b.Ic);
    EXPECT_TRUE(Near(I.inertiaAboutCom(), b.Ic));
    // Build from raw fields too: Io about origin -> Ic = Io - m (|c|^2 1 - c c^T).
    SpatialInertia J;
    J.mass = b.m;
    J.h = b.m * b.c;
    J.Io = b.Ic + b.m * (b.c.squaredNorm() * kI3 - b.c * b.c.transpose());
    EXPECT_TRUE(Near(J.inertiaAboutCom(), b.Ic));
  }
  // Massless: Io is returned unchanged, com is zero.
  SpatialInertia z;
  z.Io = rng.Spd3();
  EXPECT_TRUE(Near(z.inertiaAboutCom(), z.Io));
  EXPECT_TRUE(Near(z.com(), Vec3::Zero()));
}

TEST(SpatialInertia, Sum) {
  Rng rng(23);
  for (int t = 0; t < kTrials; ++t) {
    const RandomBody b1 = MakeBody(rng), b2 = MakeBody(rng);
    const SpatialInertia I1 = SpatialInertia::fromMassComInertia(b1.m, b1.c, b1.Ic);
    const SpatialInertia I2 = SpatialInertia::fromMassComInertia(b2.m, b2.c, b2.Ic);
    const SpatialInertia S = I1 + I2;
    EXPECT_TRUE(Near(S.matrix(), Mat6(McI(b1.m, b1.c, b1.Ic) + McI(b2.m, b2.c, b2.Ic))));
    EXPECT_TRUE(NearScalar(S.mass, b1.m + b2.m));
    EXPECT_TRUE(Near(S.com(), Vec3((b1.m * b1.c + b2.m * b2.c) / (b1.m + b2.m))));
    const Motion v = rng.V6();
    EXPECT_TRUE(Near(S * v, Vec6(I1 * v + I2 * v)));
    // Sum commutes with a change of frame.
    const Transform T = rng.Pose();
    EXPECT_TRUE(
        Near(S.transformedBy(T).matrix(), (I1.transformedBy(T) + I2.transformedBy(T)).matrix()));
  }
}

}  // namespace
