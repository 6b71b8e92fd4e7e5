// MJCF files beyond one document: <include> (elements keep their file:line, MuJoCo's path
// rules, cycles and repeats rejected), mesh assets (STL binary / ASCII, OBJ) whose volume
// inertia gives a body its mass (closed forms: boxes, a dimpled cube), and the named warnings /
// file:line errors of elements the reader ignores or rejects. MuJoCo itself is the oracle of
// python/tests/test_mjcf_files_mujoco.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "clusterdyn/mjcf.hpp"
#include "clusterdyn/model_builder.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

/// A fresh directory under the test temp dir.
std::string tempDir(const std::string& name) {
  const std::string d =
      ::testing::TempDir() + "clusterdyn_" + std::to_string(::getpid()) + "_mjcf_" + name + "/";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

void writeFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

/// Expects a ModelError whose message contains every piece.
void expectError(const std::string& path, const std::vector<std::string>& pieces) {
  try {
    parseMjcfFile(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const ModelError& e) {
    for (const std::string& p : pieces)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << "\n  lacks " << p;
  }
}

using Tri = std::array<Vec3, 3>;

/// The 12 outward triangles of the box [lo, hi].
std::vector<Tri> boxTriangles(const Vec3& lo, const Vec3& hi) {
  auto P = [&](int i) {
    return Vec3(i & 1 ? hi(0) : lo(0), i & 2 ? hi(1) : lo(1), i & 4 ? hi(2) : lo(2));
  };
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                           {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  std::vector<Tri> t;
  for (const auto& q : quads) {
    t.push_back({P(q[0]), P(q[1]), P(q[2])});
    t.push_back({P(q[0]), P(q[2]), P(q[3])});
  }
  return t;
}

std::string binaryStl(const std::vector<Tri>& tris) {
  std::string s(80, ' ');
  const uint32_t n = static_cast<uint32_t>(tris.size());
  s.append(reinterpret_cast<const char*>(&n), 4);
  for (const Tri& t : tris) {
    float f[12] = {0, 0, 0};
    for (int v = 0; v < 3; ++v)
      for (int k = 0; k < 3; ++k) f[3 + 3 * v + k] = static_cast<float>(t[v](k));
    s.append(reinterpret_cast<const char*>(f), sizeof f);
    s.append(2, '\0');
  }
  return s;
}

std::string asciiStl(const std::vector<Tri>& tris) {
  std::string s = "solid test\n";
  for (const Tri& t : tris) {
    s += "  facet normal 0 0 0\n    outer loop\n";
    for (const Vec3& v : t)
      s += "      vertex " + std::to_string(v(0)) + " " + std::to_string(v(1)) + " " +
           std::to_string(v(2)) + "\n";
    s += "    endloop\n  endfacet\n";
  }
  return s + "endsolid test\n";
}

/// A body "b" on a hinge whose inertia comes from `geoms`, with `assets`.
std::string meshModel(const std::string& assets, const std::string& geoms,
                      const std::string& compiler = "") {
  return "<mujoco model=\"m\">\n" + compiler + "<asset>\n" + assets +
         "</asset>\n<worldbody>\n<body name=\"b\">\n<joint name=\"j\"/>\n" + geoms +
         "</body>\n</worldbody>\n</mujoco>\n";
}

TEST(MjcfInclude, ElementsComeFromTheirFilesWithTheirLines) {
  const std::string d = tempDir("include");
  // main.xml includes parts/leg.xml (relative to the main file's directory); leg.xml includes
  // foot.xml, found relative to the including file's directory (parts/); a default class and
  // the compiler's meshdir come from included files.
  writeFile(d + "main.xml",
            "<mujoco model=\"inc\">\n  <include file=\"parts/settings.xml\"/>\n  <worldbody>\n"
            "    <body name=\"a\">\n      <joint name=\"ja\" class=\"leg\"/>\n"
            "      <geom size=\"0.1\"/>\n      <include file=\"parts/leg.xml\"/>\n    </body>\n"
            "  </worldbody>\n</mujoco>\n");
  writeFile(d + "parts/settings.xml",
            "<mujocoinclude>\n  <default>\n    <default class=\"leg\">\n"
            "      <joint axis=\"0 1 0\" damping=\"0.5\"/>\n    </default>\n  </default>\n"
            "</mujocoinclude>\n");
  writeFile(d + "parts/leg.xml",
            "<mujocoinclude>\n  <body name=\"shin\" pos=\"0 0 -0.3\">\n"
            "    <joint name=\"knee\" class=\"leg\"/>\n    <geom size=\"0.05\"/>\n"
            "    <include file=\"foot.xml\"/>\n  </body>\n</mujocoinclude>\n");
  writeFile(d + "parts/foot.xml",
            "<mujocoinclude>\n<body name=\"foot\" pos=\"0 0 -0.3\">\n<joint name=\"ankle\"/>\n"
            "<geom size=\"0.04\"/>\n</body>\n</mujocoinclude>\n");
  const MjcfDescription m = parseMjcfFile(d + "main.xml");
  ASSERT_EQ(m.urdf.joints.size(), 3u);
  EXPECT_EQ(m.urdf.joints[1].name, "knee");
  EXPECT_EQ(m.urdf.joints[1].parent, "a");
  EXPECT_TRUE(m.urdf.joints[1].axis.isApprox(Vec3::UnitY()));
  EXPECT_EQ(m.urdf.joints[2].name, "ankle");
  EXPECT_EQ(m.urdf.joints[2].line, 3);  // line in foot.xml
  EXPECT_EQ(buildTreeModel(m.urdf).nv, 3);

  // An error in an included file names that file and its line.
  writeFile(d + "parts/foot.xml",
            "<mujocoinclude>\n<body name=\"foot\" pos=\"0 0 -0.3\">\n<joint name=\"ankle\" "
            "type=\"screw\"/>\n</body>\n</mujocoinclude>\n");
  expectError(d + "main.xml", {"parts/foot.xml:3: <joint name=\"ankle\">", "unknown joint type"});
  // Cycle, repeat, missing file, children, malformed included XML.
  writeFile(d + "parts/foot.xml", "<x>\n<include file=\"parts/leg.xml\"/>\n</x>\n");
  expectError(d + "main.xml",
              {"parts/foot.xml:2: <include>", "include cycle: leg.xml -> foot.xml -> leg.xml"});
  writeFile(d + "parts/foot.xml", "<x>\n\n<include file=\"parts/settings.xml\"/>\n</x>\n");
  expectError(d + "main.xml",
              {"parts/foot.xml:3: <include>", "already included", "main.xml:2", "at most once"});
  writeFile(d + "parts/foot.xml", "<x>\n<include file=\"nowhere.xml\"/>\n</x>\n");
  expectError(d + "main.xml", {"parts/foot.xml:2: <include>", "cannot read 'nowhere.xml'"});
  writeFile(d + "parts/foot.xml", "<x>\n<include file=\"a.xml\"><body/></include>\n</x>\n");
  expectError(d + "main.xml", {"parts/foot.xml:2: <include>", "cannot have children"});
  writeFile(d + "parts/foot.xml", "<x>\n<body>\n</x>\n");
  expectError(d + "main.xml",
              {"parts/foot.xml:2: malformed XML", "included at", "parts/leg.xml:5"});
  writeFile(d + "parts/foot.xml", "<x/>\n");
  expectError(d + "main.xml", {"parts/leg.xml:5: <include>", "no element below"});
}

// Text opens files only below a base directory given explicitly: without one, an <include> or
// a mesh file is an error naming the element, even when the file exists in the working
// directory (a fuzzer's input must not read local files).
TEST(MjcfInclude, StringsOpenFilesOnlyFromAnExplicitBaseDirectory) {
  const std::string d = tempDir("string_base");
  writeFile(d + "parts/leg.xml",
            "<mujocoinclude>\n<body name=\"leg\">\n<joint name=\"knee\"/>\n"
            "<geom size=\"0.1\"/>\n</body>\n</mujocoinclude>\n");
  writeFile(d + "box.stl", binaryStl(boxTriangles(Vec3(0, 0, 0), Vec3(0.1, 0.2, 0.3))));
  const std::string withInclude =
      "<mujoco>\n<worldbody>\n<include file=\"parts/leg.xml\"/>\n</worldbody>\n</mujoco>\n";
  const std::string withMesh =
      meshModel("<mesh name=\"box\" file=\"box.stl\"/>\n", "<geom type=\"mesh\" mesh=\"box\"/>\n");
  auto expectStringError = [](const std::string& xml, const std::vector<std::string>& pieces) {
    try {
      parseMjcfString(xml, "s.xml");
      ADD_FAILURE() << "no error for " << xml;
    } catch (const ModelError& e) {
      for (const std::string& p : pieces)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
            << e.what() << "\n  lacks " << p;
    }
  };
  // the working directory holds the files: still refused
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(d);
  expectStringError(withInclude,
                    {"s.xml:3: <include>", "'parts/leg.xml'", "opens no files", "baseDirectory"});
  expectStringError(withMesh, {"s.xml:3: <mesh", "'box.stl'", "opens no files"});
  expectStringError("<mujoco>\n<worldbody>\n<include file=\"" + d +
                        "parts/leg.xml\"/>\n</worldbody>\n</mujoco>\n",
                    {"s.xml:3: <include>", "opens no files"});  // absolute names too
  EXPECT_THROW(parseModelString(withInclude), ModelError);      // the C load_string path
  std::filesystem::current_path(cwd);
  // with the base directory (with or without its trailing '/'): read from there
  for (const std::string& base : {d, d.substr(0, d.size() - 1)}) {
    const MjcfDescription inc = parseMjcfString(withInclude, "s.xml", base);
    ASSERT_EQ(inc.urdf.joints.size(), 1u);
    EXPECT_EQ(inc.urdf.joints[0].name, "knee");
    const MjcfDescription mesh = parseMjcfString(withMesh, "s.xml", base);
    const MjcfDescription file = [&] {
      writeFile(d + "m.xml", withMesh);
      return parseMjcfFile(d + "m.xml");
    }();
    ASSERT_EQ(mesh.urdf.links.size(), file.urdf.links.size());
    for (size_t k = 0; k < mesh.urdf.links.size(); ++k)
      EXPECT_EQ(mesh.urdf.links[k].inertial.mass, file.urdf.links[k].inertial.mass);
  }
  // a base directory without the file: the ordinary "cannot read" error
  try {
    parseMjcfString(withInclude, "s.xml", d + "parts");
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read 'parts/leg.xml'"), std::string::npos)
        << e.what();
  }
}

TEST(MjcfMesh, BoxMeshesGiveTheBoxInertiaInEveryFormat) {
  const std::string d = tempDir("mesh_box");
  const Vec3 lo(-0.1, -0.2, -0.05), hi(0.3, 0.1, 0.15);  // off-centre box
  const auto tris = boxTriangles(lo, hi);
  writeFile(d + "meshes/box.stl", binaryStl(tris));
  writeFile(d + "meshes/box_ascii.stl", asciiStl(tris));
  std::string obj;
  for (int i = 0; i < 8; ++i)
    obj += "v " + std::to_string(i & 1 ? hi(0) : lo(0)) + " " +
           std::to_string(i & 2 ? hi(1) : lo(1)) + " " + std::to_string(i & 4 ? hi(2) : lo(2)) +
           "\n";
  obj +=
      "f 1 3 4 2\nf 5/1 6/1 8/1 7/1\nf 1//2 2//2 6//2 5//2\nf -6 -2 -1 -5\nf 1 5 7 3\n"
      "f 2 4 8 6\n";
  writeFile(d + "meshes/box.obj", obj);
  const Vec3 half = (hi - lo) / 2, mid = (hi + lo) / 2;
  const double V = 8 * half.prod(), rho = 700;
  // geom frame: pos, quat (w x y z, normalized by the reader)
  const Transform X(Eigen::Quaterniond(0.9, 0.1, -0.3, 0.2).normalized().toRotationMatrix(),
                    Vec3(0.2, -0.1, 0.3));
  const Mat3 Ic =
      Mat3(Vec3(half(1) * half(1) + half(2) * half(2), half(0) * half(0) + half(2) * half(2),
                half(0) * half(0) + half(1) * half(1))
               .asDiagonal()) *
      (rho * V / 3);
  const SpatialInertia expect =
      SpatialInertia::fromMassComInertia(rho * V, X.R * mid + X.p, X.R * Ic * X.R.transpose());
  const std::string path = d + "model.xml";
  for (const char* file : {"box.stl", "box_ascii.stl", "box.obj"}) {
    SCOPED_TRACE(file);
    writeFile(path, meshModel(std::string("<mesh name=\"m\" file=\"") + file + "\"/>\n",
                              "<geom type=\"mesh\" mesh=\"m\" density=\"700\" pos=\"0.2 -0.1 "
                              "0.3\" quat=\"0.9 0.1 -0.3 0.2\"/>\n",
                              "<compiler meshdir=\"meshes\"/>\n"));
    const MjcfDescription desc = parseMjcfFile(path);
    EXPECT_TRUE(desc.warnings.empty()) << desc.warnings.front();  // closed, outward, convex
    const SpatialInertia I = buildTreeModel(desc.urdf).inertias[0];
    // vertices are single precision (as MuJoCo keeps them): ~1e-7 against the exact box
    EXPECT_NEAR(I.mass, rho * V, 1e-7 * rho * V);
    EXPECT_LT((I.h - expect.h).norm(), 1e-7 * expect.h.norm());
    EXPECT_LT((I.Io - expect.Io).norm(), 1e-6 * expect.Io.norm());
  }
  // scale stretches the box; mass="2" overrides the density; a name defaults to the file's
  writeFile(path, meshModel("<mesh file=\"box.stl\" scale=\"2 1 -3\"/>\n",
                            "<geom type=\"mesh\" mesh=\"box\" mass=\"2\"/>\n",
                            "<compiler assetdir=\"meshes\"/>\n"));
  const SpatialInertia S = buildTreeModel(parseMjcfFile(path).urdf).inertias[0];
  const Vec3 h2 = half.cwiseProduct(Vec3(2, 1, 3)), mid2 = mid.cwiseProduct(Vec3(2, 1, -3));
  const SpatialInertia expect2 = SpatialInertia::fromMassComInertia(
      2.0, mid2,
      Mat3(Vec3(h2(1) * h2(1) + h2(2) * h2(2), h2(0) * h2(0) + h2(2) * h2(2),
                h2(0) * h2(0) + h2(1) * h2(1))
               .asDiagonal()) *
          (2.0 / 3));
  EXPECT_NEAR(S.mass, 2.0, 1e-14);
  EXPECT_LT((S.h - expect2.h).norm(), 1e-7 * expect2.h.norm());
  EXPECT_LT((S.Io - expect2.Io).norm(), 1e-6 * expect2.Io.norm());
}

/// A cube [-1, 1]^3 whose top face is dimpled: its centre vertex pushed down to z = h < 1 (a
/// closed, non-convex mesh). Volume 8 - 4 (1 - h) / 3.
std::string dimpledCubeObj(double h, bool dropOneFace = false) {
  std::string s =
      "v -1 -1 -1\nv 1 -1 -1\nv 1 1 -1\nv -1 1 -1\nv -1 -1 1\nv 1 -1 1\nv 1 1 1\nv -1 1 1\n"
      "v 0 0 " +
      std::to_string(h) + "\n";
  s += "f 1 4 3 2\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
  s += "f 5 6 9\nf 6 7 9\nf 7 8 9\n";
  if (!dropOneFace) s += "f 8 5 9\n";
  return s;
}

TEST(MjcfMesh, InertiaModesFollowMuJoCoAndRejectWhatTheyCannotCompute) {
  const std::string d = tempDir("mesh_modes");
  writeFile(d + "dimple.obj", dimpledCubeObj(-0.5));
  writeFile(d + "open.obj", dimpledCubeObj(-0.5, true));
  writeFile(d + "cube.obj", dimpledCubeObj(1.0));
  const std::string path = d + "model.xml";
  auto load = [&](const std::string& mesh) {
    writeFile(path, meshModel(mesh, "<geom type=\"mesh\" mesh=\"m\" density=\"1\"/>\n"));
    return parseMjcfFile(path);
  };
  // exact: the solid's volume; legacy (MuJoCo's default): |tetrahedra| about the face
  // centroid, more than the solid for a non-convex mesh, with a warning naming the mesh
  const MjcfDescription exact = load("<mesh name=\"m\" file=\"dimple.obj\" inertia=\"exact\"/>\n");
  EXPECT_NEAR(exact.urdf.links[1].inertial.mass, 8 - 4 * 1.5 / 3, 1e-12);
  const MjcfDescription legacy = load("<mesh name=\"m\" file=\"dimple.obj\"/>\n");
  EXPECT_GT(legacy.urdf.links[1].inertial.mass, 8 - 4 * 1.5 / 3 + 1e-3);
  bool warned = false;
  for (const std::string& w : legacy.warnings)
    warned = warned || (w.find("model.xml:3: <mesh>") != std::string::npos &&
                        w.find("'m' is not convex") != std::string::npos);
  EXPECT_TRUE(warned);
  // a convex closed mesh: legacy = convex = exact, no warning
  for (const char* mode : {"legacy", "convex", "exact"}) {
    const MjcfDescription c =
        load(std::string("<mesh name=\"m\" file=\"cube.obj\" inertia=\"") + mode + "\"/>\n");
    EXPECT_NEAR(c.urdf.links[1].inertial.mass, 8.0, 1e-12) << mode;
    EXPECT_TRUE(c.urdf.links[1].inertial.inertia.isApprox(Mat3::Identity() * 16 / 3, 1e-12));
    EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  }
  // shell: area 24 of unit surface density; inertia of the six faces about the centre
  const MjcfDescription sh = load("<mesh name=\"m\" file=\"cube.obj\" inertia=\"shell\"/>\n");
  EXPECT_NEAR(sh.urdf.links[1].inertial.mass, 24.0, 1e-12);
  // about x: the two faces x = +-1 give 2 (4/3 + 4/3), the four others 4 (4 + 4/3)
  EXPECT_TRUE(sh.urdf.links[1].inertial.inertia.isApprox(Mat3::Identity() * 80 / 3, 1e-12));
  // convex of a non-convex mesh, exact of an open mesh, and a geom fitted to a mesh: errors
  auto expectMeshError = [&](const std::string& mesh, const std::string& geom,
                             const std::vector<std::string>& pieces) {
    writeFile(path, meshModel(mesh, geom));
    expectError(path, pieces);
  };
  const std::string g = "<geom type=\"mesh\" mesh=\"m\"/>\n";
  expectMeshError("<mesh name=\"m\" file=\"dimple.obj\" inertia=\"convex\"/>\n", g,
                  {"model.xml:3: <mesh name=\"m\">", "convex hull"});
  expectMeshError("<mesh name=\"m\" file=\"open.obj\" inertia=\"exact\"/>\n", g,
                  {"model.xml:3: <mesh name=\"m\">", "closed", "edges without an opposite"});
  expectMeshError("<mesh name=\"m\" file=\"cube.obj\"/>\n", "<geom type=\"box\" mesh=\"m\"/>\n",
                  {"model.xml:8: <geom>", "fitted"});
  expectMeshError("<mesh name=\"m\" file=\"missing.stl\"/>\n", g,
                  {"model.xml:3: <mesh name=\"m\">", "missing.stl: cannot read mesh file"});
  writeFile(d + "bad.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 7\n");
  expectMeshError("<mesh name=\"m\" file=\"bad.obj\"/>\n", g,
                  {"bad.obj:5: face vertex 7 does not exist"});
  writeFile(d + "bad.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n");
  expectMeshError("<mesh name=\"m\" file=\"bad.stl\"/>\n", g,
                  {"bad.stl:4: expected 'vertex x y z'"});
  // a static body's mesh is never read (no dynamics)
  writeFile(path,
            "<mujoco>\n<asset><mesh name=\"m\" file=\"missing.stl\"/></asset>\n<worldbody>\n"
            "<body><geom type=\"mesh\" mesh=\"m\"/></body>\n</worldbody>\n</mujoco>\n");
  EXPECT_NO_THROW(parseMjcfFile(path));
}

TEST(MjcfWarnings, EachIgnoredKindIsNamedOnceAndDynamicsChangesAreErrors) {
  const std::string xml =
      "<mujoco model=\"w\">\n"                                                         // 1
      "<visual><global offwidth=\"800\"/></visual>\n"                                  // 2
      "<asset>\n<texture name=\"t\" type=\"2d\" builtin=\"checker\" width=\"8\" "      // 3
      "height=\"8\"/>\n<material name=\"mat\" texture=\"t\"/>\n"                       // 4, 5
      "<material name=\"mat2\"/>\n</asset>\n"                                          // 6, 7
      "<worldbody>\n<light pos=\"0 0 3\"/>\n<camera name=\"c0\" pos=\"0 -2 1\"/>\n"    // 8-10
      "<body name=\"a\">\n<joint name=\"ja\" frictionloss=\"0.1\"/>\n"                 // 11, 12
      "<geom size=\"0.1\" material=\"mat\"/>\n<camera name=\"c1\"/>\n"                 // 13, 14
      "</body>\n</worldbody>\n"                                                        // 15, 16
      "<contact><exclude body1=\"world\" body2=\"a\"/></contact>\n"                    // 17
      "<tendon><fixed name=\"t\"><joint joint=\"ja\" coef=\"1\"/></fixed></tendon>\n"  // 18
      "<actuator><motor joint=\"ja\"/></actuator>\n"                                   // 19
      "<sensor><jointpos joint=\"ja\"/></sensor>\n"                                    // 20
      "</mujoco>\n";
  const MjcfDescription m = parseMjcfString(xml, "w.xml");
  auto count = [&](const std::string& piece) {
    int n = 0;
    for (const std::string& w : m.warnings) n += w.find(piece) != std::string::npos ? 1 : 0;
    return n;
  };
  EXPECT_EQ(count("w.xml:2: <visual>: ignored"), 1);
  EXPECT_EQ(count("w.xml:4: <texture>: ignored"), 1);
  EXPECT_EQ(count("w.xml:5: <material>: ignored (no effect on the dynamics) (2 occurrences)"), 1);
  EXPECT_EQ(count("w.xml:9: <light>: ignored"), 1);
  EXPECT_EQ(count("w.xml:10: <camera>: ignored (no effect on the dynamics) (2 occurrences)"), 1);
  EXPECT_EQ(count("w.xml:12: <joint name=\"ja\">") + count("w.xml:12: <joint>: attribute "
                                                           "'frictionloss'"),
            1);
  EXPECT_EQ(count("w.xml:17: <contact>: ignored"), 1);
  EXPECT_EQ(count("w.xml:18: <tendon>: ignored"), 1);
  EXPECT_EQ(count("w.xml:19: <actuator>: ignored (1 actuators"), 1);
  EXPECT_EQ(count("w.xml:20: <sensor>: ignored"), 1);
  EXPECT_EQ(m.warnings.size(), 10u) << ::testing::PrintToString(m.warnings);

  // what would change the dynamics: file:line errors
  auto expectStringError = [](const std::string& body, const std::vector<std::string>& pieces) {
    try {
      parseMjcfString(
          "<mujoco>\n<worldbody>\n<body name=\"a\">\n<joint name=\"ja\"/>\n"
          "<geom size=\"0.1\"/>\n</body>\n<body name=\"b\">\n<joint name=\"jb\"/>\n"
          "<geom size=\"0.1\"/>\n</body>\n</worldbody>\n" +
              body + "</mujoco>\n",
          "e.xml");
      ADD_FAILURE() << "no error for " << body;
    } catch (const ModelError& e) {
      for (const std::string& p : pieces)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
  };
  expectStringError(
      "<tendon>\n<fixed name=\"t\" stiffness=\"5\"><joint joint=\"ja\" "
      "coef=\"1\"/><joint joint=\"jb\" coef=\"-1\"/></fixed>\n</tendon>\n",
      {"e.xml:12: <tendon>", "stiffness"});
  expectStringError(
      "<tendon>\n<fixed name=\"t\"><joint joint=\"ja\" coef=\"1\"/></fixed>\n"
      "</tendon>\n<equality>\n<tendon tendon1=\"t\"/>\n</equality>\n",
      {"e.xml:16: <tendon>", "equality <tendon> is not supported"});
  expectStringError(
      "<equality>\n<joint joint1=\"ja\" joint2=\"jb\" polycoef=\"0 1 0.2 0 0\"/>\n"
      "</equality>\n",
      {"e.xml:13: <joint>", "only a linear relation"});
  expectStringError(
      "<deformable>\n<flex name=\"f\" dim=\"1\" body=\"a b\" "
      "vertex=\"0 0 0 0 0 0\" element=\"0 1\"/>\n</deformable>\n",
      {"e.xml:12: <deformable>", "not supported"});
  expectStringError(
      "<worldbody>\n<flexcomp name=\"fc\" type=\"grid\" count=\"2 2 1\"/>\n"
      "</worldbody>\n",
      {"e.xml:13: <flexcomp", "not supported"});
}

}  // namespace
}  // namespace clusterdyn::test
