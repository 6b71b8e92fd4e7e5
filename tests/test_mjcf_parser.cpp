// MJCF reader: file:line errors, MuJoCo's frame and inertia conventions checked against
// closed forms, the same mechanism as URDF+ and as MJCF (identical H, C, CE-ABA), loop and
// mimic mapping, and the passive joint forces against their potential (finite differences).
// MuJoCo itself is the oracle of python/tests/test_mjcf_mujoco.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "clusterdyn/aba.hpp"
#include "clusterdyn/configuration.hpp"
#include "clusterdyn/crba.hpp"
#include "clusterdyn/derivatives.hpp"
#include "clusterdyn/energy.hpp"
#include "clusterdyn/mjcf.hpp"
#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/rnea.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string mujoco(const std::string& body) {
  return "<mujoco model=\"t\">\n" + body + "</mujoco>\n";
}

/// Expects a ModelError "<string>:line: <tag...>: ... what ..." from parsing xml.
void expectError(const std::string& xml, int line, const std::string& tag,
                 const std::string& what) {
  try {
    parseMjcfString(xml);
    FAIL() << "no error for:\n" << xml;
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("<string>:" + std::to_string(line) + ": <" + tag), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

const char* kLink =
    "    <body name=\"a\">\n      <joint name=\"ja\" axis=\"0 1 0\"/>\n"
    "      <geom type=\"sphere\" size=\"0.1\"/>\n    </body>\n";

TEST(MjcfParser, ErrorsNameFileLineElementAndAttribute) {
  expectError("<robot name=\"x\"/>\n", 1, "robot", "the root element must be <mujoco>");
  expectError(mujoco("<worldbody>\n<body name=\"b\">\n<joint type=\"screw\"/>\n"
                     "<geom size=\"0.1\"/></body></worldbody>\n"),
              4, "joint", "unknown joint type 'screw'");
  expectError(mujoco("<worldbody>\n<body name=\"b\">\n<joint/>\n<geom type=\"mesh\" "
                     "mesh=\"m\"/></body></worldbody>\n"),
              5, "geom", "unknown mesh 'm'");
  expectError(mujoco("<worldbody>\n<body name=\"b\">\n<joint/>\n<inertial pos=\"0 0 0\" "
                     "mass=\"1\" diaginertia=\"1 1 1\" fullinertia=\"1 1 1 0 0 0\"/>\n"
                     "</body></worldbody>\n"),
              5, "inertial", "exactly one of 'diaginertia' and 'fullinertia'");
  expectError(mujoco("<worldbody>\n<body name=\"b\">\n<joint/>\n<inertial pos=\"0 0 0\" "
                     "mass=\"1\" diaginertia=\"1 1 3\"/>\n</body></worldbody>\n"),
              5, "inertial", "triangle inequality");
  expectError(mujoco("<worldbody>\n<body name=\"b\">\n<joint/>\n<geom size=\"0.1\" "
                     "shellinertia=\"true\"/>\n</body></worldbody>\n"),
              5, "geom", "shell inertia");
  expectError(mujoco("<worldbody>\n" + std::string(kLink) +
                     "    <body name=\"c\">\n      <joint name=\"jc\"/>\n"
                     "      <body name=\"d\"><freejoint/><geom size=\"0.1\"/></body>\n"
                     "      <geom size=\"0.1\"/>\n    </body>\n</worldbody>\n"),
              9, "freejoint", "a free joint must be the only joint of a child of <worldbody>");
  const std::string two = "<worldbody>\n" + std::string(kLink) +
                          "    <body name=\"c\">\n      <joint name=\"jc\"/>\n"
                          "      <geom size=\"0.1\"/>\n    </body>\n</worldbody>\n";
  expectError(mujoco(two + "<equality>\n<joint joint1=\"ja\" joint2=\"jc\" "
                           "polycoef=\"0 1 0.5 0 0\"/>\n</equality>\n"),
              13, "joint", "only a linear relation");
  expectError(mujoco(two + "<equality>\n<joint joint1=\"ja\"/>\n</equality>\n"), 13, "joint",
              "without joint2 locks joint 'ja'");
  expectError(mujoco(two + "<equality>\n<connect body1=\"a\" body2=\"zz\" anchor=\"0 0 0\"/>\n"
                           "</equality>\n"),
              13, "connect", "attribute 'body2': unknown body 'zz'");
  expectError(mujoco(two + "<equality>\n<connect body1=\"a\" body2=\"c\"/>\n</equality>\n"), 13,
              "connect", "missing attribute 'anchor'");
  expectError(mujoco(two + "<tendon>\n<fixed stiffness=\"3\"><joint joint=\"ja\" coef=\"1\"/>"
                           "</fixed>\n</tendon>\n"),
              12, "tendon", "stiffness");
  expectError(mujoco("<include file=\"no_such_file.xml\"/>\n"), 2, "include", "opens no files");
  expectError(mujoco("<worldbody>\n<body>\n<frame pos=\"1 0 0\">\n<joint/>\n</frame>\n"
                     "</body>\n</worldbody>\n"),
              5, "joint", "cannot be inside a <frame>");
  expectError(mujoco("<worldbody>\n<body>\n<joint/>\n<frame>\n<geom size=\"0.1\"/>\n"
                     "</frame>\n</body>\n</worldbody>\n"),
              6, "geom", "inside a <frame> of a moving body");
  expectError(mujoco("<worldbody>\n<body name=\"b\" class=\"nope\">\n<joint/>\n"
                     "</body></worldbody>\n"),
              3, "body", "unknown default class 'nope'");
  expectError(mujoco("<worldbody>\n<body name=\"b\" euler=\"0 0 1\" quat=\"1 0 0 0\">\n"
                     "<joint/>\n</body></worldbody>\n"),
              3, "body", "more than one orientation attribute");
  expectError(mujoco("<option viscosity=\"0.1\"/>\n"), 2, "option", "fluid forces");
  expectError(mujoco("<compiler angle=\"grad\"/>\n"), 2, "compiler", "attribute 'angle'");
}

/// Model of one body "b" (file pos/orientation attributes given) on a hinge about z.
Model oneBody(const std::string& compiler, const std::string& bodyAttrs, const std::string& inner) {
  const std::string xml =
      mujoco(compiler + "<worldbody>\n<body name=\"b\" " + bodyAttrs +
             ">\n<joint name=\"j\" axis=\"0 0 1\"/>\n" + inner + "</body>\n</worldbody>\n");
  return buildTreeModel(parseMjcfString(xml).urdf);
}

TEST(MjcfParser, OrientationsFollowMuJoCo) {
  // Degrees by default; euler "xyz" is intrinsic (post-multiplied), "XYZ" extrinsic = URDF rpy.
  const Vec3 e(20.0, -35.0, 50.0);
  const Mat3 Rx = Eigen::AngleAxisd(e(0) * kPi / 180, Vec3::UnitX()).toRotationMatrix();
  const Mat3 Ry = Eigen::AngleAxisd(e(1) * kPi / 180, Vec3::UnitY()).toRotationMatrix();
  const Mat3 Rz = Eigen::AngleAxisd(e(2) * kPi / 180, Vec3::UnitZ()).toRotationMatrix();
  const std::string eul = "euler=\"20 -35 50\"";
  const std::string g = "<geom size=\"0.1\"/>\n";
  EXPECT_TRUE(oneBody("", eul, g).jointPlacement[0].R.isApprox(Rx * Ry * Rz, 1e-14));
  EXPECT_TRUE(oneBody("<compiler eulerseq=\"XYZ\"/>\n", eul, g)
                  .jointPlacement[0]
                  .R.isApprox(rpyToMatrix(e * kPi / 180), 1e-14));
  EXPECT_TRUE(oneBody("<compiler angle=\"radian\"/>\n", "axisangle=\"0 0 2 0.5\"", g)
                  .jointPlacement[0]
                  .R.isApprox(Eigen::AngleAxisd(0.5, Vec3::UnitZ()).toRotationMatrix(), 1e-14));
  // quat is w x y z (normalized); xyaxes: x, then y orthogonalized
  const Mat3 Rq = oneBody("", "quat=\"2 0 0 2\"", g).jointPlacement[0].R;
  EXPECT_TRUE(Rq.isApprox(Eigen::AngleAxisd(kPi / 2, Vec3::UnitZ()).toRotationMatrix(), 1e-14));
  const Mat3 Rxy = oneBody("", "xyaxes=\"0 1 0 -1 1 0\"", g).jointPlacement[0].R;
  EXPECT_TRUE(Rxy.isApprox(Rq, 1e-14));
  const Mat3 Rzax = oneBody("", "zaxis=\"1 0 0\"", g).jointPlacement[0].R;
  EXPECT_TRUE((Rzax * Vec3::UnitZ()).isApprox(Vec3::UnitX(), 1e-14));
}

TEST(MjcfParser, GeomInertiaFollowsMuJoCoFormulas) {
  // box 0.1 x 0.2 x 0.3 half sizes at density 500, offset; a sphere with mass="2".
  const Model m = oneBody("", "",
                          "<geom type=\"box\" size=\"0.1 0.2 0.3\" density=\"500\" "
                          "pos=\"0.1 0 0\"/>\n<geom type=\"sphere\" size=\"0.05\" mass=\"2\" "
                          "pos=\"-0.2 0 0\"/>\n");
  const double mb = 500 * 8 * 0.1 * 0.2 * 0.3;
  const SpatialInertia box = SpatialInertia::fromMassComInertia(
      mb, Vec3(0.1, 0, 0),
      Mat3(Vec3(0.04 + 0.09, 0.01 + 0.09, 0.01 + 0.04).asDiagonal()) * (mb / 3));
  const SpatialInertia sph = SpatialInertia::fromMassComInertia(
      2.0, Vec3(-0.2, 0, 0), Mat3::Identity() * 2 * 2.0 * 0.05 * 0.05 / 5);
  EXPECT_NEAR(m.inertias[0].mass, mb + 2.0, 1e-12);
  EXPECT_TRUE(m.inertias[0].h.isApprox(box.h + sph.h, 1e-12));
  EXPECT_TRUE(m.inertias[0].Io.isApprox(box.Io + sph.Io, 1e-12));
  // <inertial> wins over geoms under inertiafromgeom="auto"; "true" takes the geoms.
  const std::string in = "<inertial pos=\"0 0 0\" mass=\"3\" diaginertia=\"1 1 1\"/>\n";
  EXPECT_NEAR(oneBody("", "", in + "<geom size=\"0.1\"/>\n").inertias[0].mass, 3.0, 0);
  EXPECT_NEAR(oneBody("<compiler inertiafromgeom=\"true\"/>\n", "", in + "<geom size=\"0.1\"/>\n")
                  .inertias[0]
                  .mass,
              1000 * 4 * kPi * 0.001 / 3, 1e-12);
}

TEST(MjcfParser, DefaultClassesInheritAndChildclassApplies) {
  // The nested class inherits the parent's joint axis even when the parent's <joint> comes
  // after it; childclass applies to the body's elements, an explicit class wins.
  const MjcfDescription d = parseMjcfString(
      mujoco("<default>\n<default class=\"leg\">\n<default class=\"knee\">\n"
             "<joint damping=\"0.3\"/>\n</default>\n<joint axis=\"0 1 0\" damping=\"0.1\"/>\n"
             "<geom density=\"2000\"/>\n</default>\n</default>\n<worldbody>\n"
             "<body name=\"a\" childclass=\"leg\">\n<joint name=\"ja\"/>\n<geom size=\"0.1\"/>\n"
             "<body name=\"b\">\n<joint name=\"jb\" class=\"knee\"/>\n<geom size=\"0.1\"/>\n"
             "</body>\n</body>\n</worldbody>\n"));
  ASSERT_EQ(d.urdf.joints.size(), 2u);
  EXPECT_TRUE(d.urdf.joints[0].axis.isApprox(Vec3::UnitY()));
  EXPECT_TRUE(d.urdf.joints[1].axis.isApprox(Vec3::UnitY()));
  ASSERT_EQ(d.jointDynamics.size(), 2u);
  EXPECT_EQ(d.jointDynamics[0].damping, 0.1);
  EXPECT_EQ(d.jointDynamics[1].damping, 0.3);
  EXPECT_NEAR(d.urdf.links[1].inertial.mass, 2000 * 4 * kPi * 0.001 / 3, 1e-12);
}

TEST(MjcfParser, JointAnchorOffsetAndSeveralJointsPerBody) {
  // MuJoCo: body pose = parent * body * [T(p1) R1 T(-p1)] * [T(p2) R2 T(-p2)].
  const Model m = buildTreeModel(
      parseMjcfString(mujoco("<compiler angle=\"radian\"/>\n<worldbody>\n<body name=\"b\" "
                             "pos=\"0.3 0 0\">\n<joint name=\"j1\" axis=\"0 1 0\" pos=\"0 0 "
                             "0.2\"/>\n<joint name=\"j2\" axis=\"1 0 0\" pos=\"0.1 0 0\" "
                             "ref=\"0.4\"/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n"))
          .urdf);
  ASSERT_EQ(m.nv, 2);
  Data d(m);
  const VecX q = (VecX(2) << 0.7, -0.3).finished();
  forwardKinematics(m, d, q);
  auto T = [](const Vec3& p) { return Transform(Mat3::Identity(), p); };
  auto R = [](const Vec3& a, double t) {
    return Transform(Eigen::AngleAxisd(t, a).toRotationMatrix(), Vec3::Zero());
  };
  const Vec3 p1(0, 0, 0.2), p2(0.1, 0, 0);
  // ref: q = qpos - ref, so the drawn pose is q = 0
  const Transform expect = T(Vec3(0.3, 0, 0)) * T(p1) * R(Vec3::UnitY(), 0.7) * T(-p1) * T(p2) *
                           R(Vec3::UnitX(), -0.3) * T(-p2);
  const Transform got = framePlacement(m, d, m.frameId("b"));
  EXPECT_TRUE(got.R.isApprox(expect.R, 1e-14));
  EXPECT_TRUE(got.p.isApprox(expect.p, 1e-14));
}

TEST(MjcfParser, SameMechanismAsUrdfPlusGivesIdenticalDynamics) {
  const ClusterModel a = loadModel(modelsPath("cd_four_bar.urdf"));
  const ClusterModel b = loadModel(modelsPath("cd_four_bar.xml"));  // dispatch by extension
  ASSERT_EQ(a.ny, 1);
  ASSERT_EQ(b.ny, 1);
  ASSERT_EQ(b.independentVelocityNames[0], "crank_joint");
  ClusterData da(a), db(b);
  for (double y : {0.0, 0.7, -1.2, 2.5}) {
    const VecX Y = VecX::Constant(1, y), Yd = VecX::Constant(1, -0.9);
    ASSERT_EQ(independentToSpanning(a, da, Y, Yd), Status::Ok);
    ASSERT_EQ(independentToSpanning(b, db, Y, Yd), Status::Ok);
    EXPECT_LT((da.q - db.q).cwiseAbs().maxCoeff(), 1e-12);
    const VecX q = da.q, v = da.v;
    ASSERT_EQ(clusterMassMatrix(a, da, q), Status::Ok);
    ASSERT_EQ(clusterMassMatrix(b, db, q), Status::Ok);
    EXPECT_LT((da.H - db.H).cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_EQ(clusterBias(a, da, q, v), Status::Ok);
    ASSERT_EQ(clusterBias(b, db, q, v), Status::Ok);
    EXPECT_LT((da.C - db.C).cwiseAbs().maxCoeff(), 1e-12);
    const VecX tau = VecX::Constant(1, 0.2);
    ASSERT_EQ(ceAba(a, da, q, v, tau), Status::Ok);
    ASSERT_EQ(ceAba(b, db, q, v, tau), Status::Ok);
    EXPECT_LT((da.ydd - db.ydd).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_LT((da.qdd - db.qdd).cwiseAbs().maxCoeff(), 1e-10);
  }
}

TEST(MjcfParser, EqualitiesBecomeLoopsAndMimics) {
  const MjcfDescription g = parseMjcfFile(modelsPath("cd_geared_leg.xml"));
  int mimics = 0;
  for (const auto& j : g.urdf.joints)
    if (j.mimic.present) {
      ++mimics;
      if (j.name == "knee_rotor_joint") {
        EXPECT_EQ(j.mimic.joint, "knee");
        EXPECT_EQ(j.mimic.multiplier, -10.0);
      }
    }
  EXPECT_EQ(mimics, 2);
  const ClusterModel leg = loadModel(modelsPath("cd_geared_leg.xml"));
  EXPECT_EQ(leg.ny, 9);  // 6 free + hip_roll, hip_pitch, knee
  // Ball joint with a free spin inside a connect loop: embedded as three hinges (docs/mjcf.md
  // section 3), which carry its damping (0.01) together; with armature on the ball (which three
  // hinges cannot carry) embedding fails naming it; cut loading works.
  EXPECT_EQ(loadModel(modelsPath("cd_rod_leg.xml")).ny, 3);
  std::string withArmature;
  {
    std::ifstream in(modelsPath("cd_rod_leg.xml"));
    std::stringstream text;
    text << in.rdbuf();
    withArmature = text.str();
    const std::string ball = "type=\"ball\" damping=\"0.01\"/>";
    ASSERT_NE(withArmature.find(ball), std::string::npos);
    withArmature.replace(withArmature.find(ball), ball.size(),
                         "type=\"ball\" damping=\"0.01\" armature=\"0.001\"/>");
  }
  try {
    loadModel(writeTempFile("cd_rod_leg_ball_armature.xml", withArmature));
    ADD_FAILURE() << "embedded ball-joint loop with armature on the ball loaded";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("rod_ball"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cut the loop instead"), std::string::npos) << e.what();
    // An MJCF user has no independent="true" to set: the message says what the reader does.
    EXPECT_NE(std::string(e.what()).find("MJCF (no such mark): the reader makes dependent"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("MJCF: hinge joints"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot carry its armature"), std::string::npos)
        << e.what();
  }
  ModelOptions cut;
  cut.cutLoops = true;
  const ClusterModel rod = loadModel(modelsPath("cd_rod_leg.xml"), cut);
  EXPECT_EQ(rod.cutLoops.size(), 1u);
  EXPECT_EQ(cutLoopConstraints(rod).rows(), 3);
}

TEST(MjcfParser, DispatchByExtensionAndRootElement) {
  EXPECT_TRUE(isMjcfFile(modelsPath("cd_four_bar.xml")));
  EXPECT_FALSE(isMjcfFile(modelsPath("cd_four_bar.urdf")));
  const std::string xml = mujoco("<worldbody>\n" + std::string(kLink) + "</worldbody>\n");
  const std::string path = writeTempFile("mjcf_no_extension.model", xml);
  EXPECT_TRUE(isMjcfFile(path));
  EXPECT_EQ(loadTreeModel(path).nv, 1);
  // a URDF named *.xml stays URDF
  const std::string urdf =
      writeTempFile("urdf_named.xml", "<robot name=\"r\">\n<link name=\"base\"/>\n</robot>\n");
  EXPECT_FALSE(isMjcfFile(urdf));
  EXPECT_EQ(loadTreeModel(urdf).nv, 0);
  EXPECT_EQ(parseModelString(xml).joints.size(), 1u);
}

TEST(MjcfPassive, SpringsAndDampersMatchTheirPotential) {
  // hinge spring about springref (degrees, relative to ref), ball spring, dampers.
  const MjcfDescription d = parseMjcfString(
      mujoco("<worldbody>\n<body name=\"a\">\n<joint name=\"h\" axis=\"0 1 0\" ref=\"10\" "
             "springref=\"40\" stiffness=\"3\" damping=\"0.5\" armature=\"0.01\"/>\n"
             "<geom size=\"0.1\"/>\n<body name=\"b\" pos=\"0 0 -0.3\">\n<joint name=\"s\" "
             "type=\"ball\" stiffness=\"2\" damping=\"0.2\"/>\n<geom size=\"0.1\"/>\n</body>\n"
             "</body>\n</worldbody>\n"));
  const Model m = buildTreeModel(d.urdf);
  const PassiveJointModel p = passiveJointModel(m, d);
  EXPECT_NEAR(p.springPosition[0], 30 * kPi / 180, 1e-15);
  EXPECT_EQ(p.armature[0], 0.01);
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 5; ++trial) {
    const VecX q = randomConfiguration(m, rng), v = VecX::Random(m.nv);
    VecX tau(m.nv), tau0(m.nv);
    ASSERT_EQ(passiveForces(m, p, q, v, tau), Status::Ok);
    ASSERT_EQ(passiveForces(m, p, q, VecX::Zero(m.nv), tau0), Status::Ok);
    // damping part
    EXPECT_NEAR(tau[0] - tau0[0], -0.5 * v[0], 1e-14);
    EXPECT_TRUE((tau - tau0).tail<3>().isApprox(-0.2 * v.tail<3>(), 1e-14));
    // spring part = -dV/dq along each velocity direction, V = k/2 (angle from the rest pose)^2
    auto V = [&](const VecX& x) {
      const Eigen::Quaterniond qa(x[4], x[1], x[2], x[3]);
      const double ang = Eigen::AngleAxisd(qa).angle();
      const double a = ang > kPi ? 2 * kPi - ang : ang;
      return 0.5 * 3 * std::pow(x[0] - p.springPosition[0], 2) + 0.5 * 2 * a * a;
    };
    for (int k = 0; k < m.nv; ++k) {
      const double h = 1e-6;
      const VecX e = VecX::Unit(m.nv, k);
      const double dV = (V(integrate(m, q, e, h)) - V(integrate(m, q, e, -h))) / (2 * h);
      EXPECT_NEAR(tau0[k], -dV, 1e-7) << k;
    }
  }
}

}  // namespace
TEST(MjcfJointDynamics, AppliedByDefaultSwitchableAndConsistent) {
  const std::string body =
      "<worldbody>\n<body name=\"a\">\n<joint name=\"h\" axis=\"0 1 0\" ref=\"10\" "
      "springref=\"40\" stiffness=\"3\" damping=\"0.5\" armature=\"0.01\"/>\n"
      "<geom size=\"0.1\" pos=\"0.1 0 0\"/>\n<body name=\"b\" pos=\"0 0 -0.3\">\n<joint "
      "name=\"s\" type=\"ball\" stiffness=\"2\" damping=\"0.2\" armature=\"0.03\"/>\n<geom "
      "size=\"0.1\" pos=\"0 0.1 0\"/>\n<body name=\"c\" pos=\"0 0 -0.3\">\n<joint name=\"p\" "
      "type=\"slide\" axis=\"1 0 0\" stiffness=\"20\" springref=\"0.1\"/>\n<geom "
      "size=\"0.05\"/>\n</body>\n</body>\n</body>\n</worldbody>\n";
  const std::string opt = "<option gravity=\"0.5 0 -3\"/>\n";
  const MjcfDescription d = parseMjcfString(mujoco(opt + body));
  const Model m = buildTreeModel(d.urdf);
  EXPECT_TRUE(m.gravity.isApprox(Vec3(0.5, 0, -3)));
  ASSERT_TRUE(m.hasArmature() && m.hasPassiveForces());
  ModelOptions rigid;
  rigid.jointDynamics = false;
  rigid.fileGravity = false;
  const Model r = buildTreeModel(d.urdf, rigid);
  EXPECT_FALSE(r.hasJointDynamics());
  EXPECT_TRUE(r.gravity.isApprox(Vec3(0, 0, -9.81)));
  rigid.gravity = Vec3(0.5, 0, -3);
  const Model rg = buildTreeModel(d.urdf, rigid);
  // <flag passive="disable">: armature only
  const Model np = buildTreeModel(
      parseMjcfString(mujoco("<option><flag passive=\"disable\"/></option>\n" + body)).urdf);
  EXPECT_TRUE(np.hasArmature() && !np.hasPassiveForces());
  const PassiveJointModel p = passiveJointModel(m, d);
  Data dm(m), dr(rg);
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 5; ++trial) {
    const VecX q = randomConfiguration(m, rng), v = VecX::Random(m.nv), tau = VecX::Random(m.nv);
    ASSERT_EQ(crba(m, dm, q), Status::Ok);
    ASSERT_EQ(crba(rg, dr, q), Status::Ok);
    EXPECT_TRUE((dm.M - dr.M).isApprox(MatX(p.armature.asDiagonal()), 1e-14));
    VecX tp(m.nv);
    ASSERT_EQ(passiveForces(m, p, q, v, tp), Status::Ok);
    ASSERT_EQ(nonLinearEffects(m, dm, q, v), Status::Ok);
    ASSERT_EQ(nonLinearEffects(rg, dr, q, v), Status::Ok);
    EXPECT_LT((dm.nle - dr.nle + tp).cwiseAbs().maxCoeff(), 1e-12);
    // ABA solves (H + A) vdot + nle = tau: against the dense solve and RNEA
    ASSERT_EQ(aba(m, dm, q, v, tau), Status::Ok);
    const VecX vdot = dm.ddq;
    ASSERT_EQ(crba(m, dm, q), Status::Ok);
    ASSERT_EQ(nonLinearEffects(m, dm, q, v), Status::Ok);
    const VecX dense = dm.M.llt().solve(tau - dm.nle);
    EXPECT_LT((vdot - dense).cwiseAbs().maxCoeff(), 1e-10);
    ASSERT_EQ(rnea(m, dm, q, v, vdot), Status::Ok);
    EXPECT_LT((dm.tau - tau).cwiseAbs().maxCoeff(), 1e-10);
    // energy: kinetic 1/2 v^T (H + A) v; generalized gravity (springs included) = dV/dq
    ASSERT_EQ(computeKineticEnergy(m, dm, q, v), Status::Ok);
    EXPECT_NEAR(dm.kineticEnergy, 0.5 * v.dot(dm.M * v), 1e-12);
    ASSERT_EQ(generalizedGravity(m, dm, q), Status::Ok);
    const VecX g = dm.nle;
    for (int k = 0; k < m.nv; ++k) {
      const double h = 1e-6;
      const VecX e = VecX::Unit(m.nv, k);
      const double dV = (potentialEnergy(m, dm, integrate(m, q, e, h)) -
                         potentialEnergy(m, dm, integrate(m, q, e, -h))) /
                        (2 * h);
      EXPECT_NEAR(g[k], dV, 1e-6) << k;
    }
    // the derivatives model the joint dynamics (test_joint_dynamics_derivatives.cpp): the
    // same ddq, and d ddq / d tau = (H + A)^-1
    DerivativeData dd(m);
    ASSERT_EQ(computeABADerivatives(m, dm, dd, q, v, tau), Status::Ok);
    EXPECT_LT((dd.ddq - vdot).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_LT((dd.Minv * dm.M - MatX::Identity(m.nv, m.nv)).cwiseAbs().maxCoeff(), 1e-10);
  }
}

}  // namespace clusterdyn::test
