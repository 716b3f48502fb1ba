// tsubu_vdb.cpp - OpenVDB behind the C header tsubu_vdb.h.
//
// Every entry point catches every exception and turns it into a ts_status
// with a message, because a C++ exception unwinding into C (or into
// Blender) would crash the host.
#include "tsubu_vdb.h"

extern "C" {
#include "../core/threads.h"
}

#include <openvdb/openvdb.h>
#include <openvdb/io/File.h>
#include <openvdb/tools/Dense.h>
#include <openvdb/tools/Interpolation.h>
#include <openvdb/tools/Filter.h>
#include <openvdb/tools/LevelSetUtil.h>
#include <openvdb/tools/MeshToVolume.h>
#include <openvdb/tools/Morphology.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/Prune.h>
#include <openvdb/tools/SignedFloodFill.h>
#include <openvdb/tools/VolumeToMesh.h>
#include <tbb/task_arena.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

struct tsvdb_grid {
    openvdb::FloatGrid::Ptr grid;
};

namespace {

void initialise_once()
{
    static std::once_flag flag;
    std::call_once(flag, [] { openvdb::initialize(); });
}

// OpenVDB's tools run on TBB, which takes every core whatever the bake was given: a farm job held to one
// thread (OMP_NUM_THREADS=1) still spread its volume work over all cores. So each call runs in an arena
// as wide as the bake may use. (On a busy machine that is wider than the set-up's OpenMP count: TBB's
// tasks are taken over from a descheduled thread, so a second thread gains there - 10-20 % beside two
// busy processes on 2 cores - where OpenMP's barriers lose.)
template <typename F>
ts_status guarded(ts_error *err, const char *what, F &&body)
{
    try {
        initialise_once();
        tbb::task_arena arena(ts_threads_allowed());
        return arena.execute(body);
    } catch (const std::bad_alloc &) {
        return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory", what);
    } catch (const std::exception &e) {
        return ts_fail(err, TS_ERR_INTERNAL, "%s: OpenVDB failed: %s", what, e.what());
    } catch (...) {
        return ts_fail(err, TS_ERR_INTERNAL, "%s: OpenVDB failed", what);
    }
}

ts_status check_voxel(double voxel_size, const char *what, ts_error *err)
{
    if (!(voxel_size > 0.0) || !std::isfinite(voxel_size))
        return ts_fail(err, TS_ERR_INVALID, "%s: voxel size must be positive (got %g)", what, voxel_size);
    return TS_OK;
}

ts_status read_mesh(const float *v, size_t nv, const int32_t *t, size_t nt, std::vector<openvdb::Vec3s> &points,
                    std::vector<openvdb::Vec3I> &tris, const char *what, ts_error *err)
{
    if (nv == 0 || nt == 0)
        return ts_fail(err, TS_ERR_INVALID, "%s: the mesh is empty (%zu vertices, %zu triangles)", what, nv, nt);
    points.resize(nv);
    for (size_t i = 0; i < nv; i++) {
        if (!std::isfinite(v[3 * i]) || !std::isfinite(v[3 * i + 1]) || !std::isfinite(v[3 * i + 2]))
            return ts_fail(err, TS_ERR_INVALID, "%s: vertex %zu is not finite", what, i);
        points[i] = openvdb::Vec3s(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
    }
    tris.resize(nt);
    for (size_t i = 0; i < nt; i++) {
        for (int k = 0; k < 3; k++)
            if (t[3 * i + k] < 0 || size_t(t[3 * i + k]) >= nv)
                return ts_fail(err, TS_ERR_INVALID, "%s: triangle %zu refers to vertex %d of %zu", what, i,
                               int(t[3 * i + k]), nv);
        tris[i] = openvdb::Vec3I(t[3 * i], t[3 * i + 1], t[3 * i + 2]);
    }
    return TS_OK;
}

// Map each point into the grid's index space for the mesh converters.
void to_index_space(std::vector<openvdb::Vec3s> &points, const openvdb::math::Transform &xf)
{
    for (auto &p : points)
        p = openvdb::Vec3s(xf.worldToIndex(openvdb::Vec3d(p)));
}

tsvdb_grid *wrap(openvdb::FloatGrid::Ptr g)
{
    tsvdb_grid *out = new tsvdb_grid;
    out->grid = g;
    return out;
}

ts_status dense_from_bbox(const openvdb::FloatGrid &grid, openvdb::CoordBBox bbox, tsvdb_dense *out)
{
    openvdb::tools::Dense<float, openvdb::tools::LayoutXYZ> dense(bbox);
    openvdb::tools::copyToDense(grid, dense);
    openvdb::Coord dim = bbox.dim();
    size_t n = size_t(dim.x()) * size_t(dim.y()) * size_t(dim.z());
    out->values = static_cast<float *>(std::malloc(n * sizeof(float)));
    if (!out->values)
        throw std::bad_alloc();
    std::memcpy(out->values, dense.data(), n * sizeof(float));
    openvdb::Vec3d o = grid.transform().indexToWorld(bbox.min());
    for (int a = 0; a < 3; a++) {
        out->origin[a] = float(o[a]);
        out->dims[a] = dim[a];
    }
    out->voxel_size = float(grid.voxelSize()[0]);
    return TS_OK;
}

// Particle list adapter for ParticlesToLevelSet.
struct sphere_list {
    const float *x, *y, *z, *radius;
    float radius_all;
    size_t count;
    using PosType = openvdb::Vec3R;
    size_t size() const { return count; }
    void getPos(size_t n, openvdb::Vec3R &p) const { p = openvdb::Vec3R(x[n], y[n], z[n]); }
    void getPosRad(size_t n, openvdb::Vec3R &p, openvdb::Real &r) const
    {
        getPos(n, p);
        r = radius ? radius[n] : radius_all;
    }
};

} // namespace

extern "C" {

void tsvdb_dense_free(tsvdb_dense *d)
{
    if (!d)
        return;
    std::free(d->values);
    d->values = nullptr;
}

void tsvdb_grid_free(tsvdb_grid *g) { delete g; }

const char *tsvdb_grid_name(const tsvdb_grid *g)
{
    // getName() returns a copy; the metadata value lives as long as the grid
    auto meta = g->grid->getMetadata<openvdb::StringMetadata>(openvdb::GridBase::META_GRID_NAME);
    return meta ? meta->value().c_str() : "";
}

ts_status tsvdb_grid_set_name(tsvdb_grid *g, const char *name, ts_error *err)
{
    return guarded(err, "vdb grid name", [&] {
        g->grid->setName(name);
        return TS_OK;
    });
}

int tsvdb_grid_is_level_set(const tsvdb_grid *g) { return g->grid->getGridClass() == openvdb::GRID_LEVEL_SET; }
double tsvdb_grid_voxel_size(const tsvdb_grid *g) { return g->grid->voxelSize()[0]; }
uint64_t tsvdb_grid_active_voxels(const tsvdb_grid *g) { return g->grid->activeVoxelCount(); }
float tsvdb_grid_background(const tsvdb_grid *g) { return g->grid->background(); }

float tsvdb_grid_sample(const tsvdb_grid *g, double x, double y, double z)
{
    openvdb::tools::GridSampler<openvdb::FloatGrid, openvdb::tools::BoxSampler> sampler(*g->grid);
    return sampler.wsSample(openvdb::Vec3R(x, y, z));
}

ts_status tsvdb_mesh_to_level_set(const float *vertices, size_t vertex_count, const int32_t *triangles,
                                  size_t triangle_count, double voxel_size, double half_width, tsvdb_grid **out,
                                  ts_error *err)
{
    return guarded(err, "mesh to level set", [&] {
        ts_status st = check_voxel(voxel_size, "mesh to level set", err);
        std::vector<openvdb::Vec3s> points;
        std::vector<openvdb::Vec3I> tris;
        if (st == TS_OK)
            st = read_mesh(vertices, vertex_count, triangles, triangle_count, points, tris, "mesh to level set", err);
        if (st != TS_OK)
            return st;
        auto xf = openvdb::math::Transform::createLinearTransform(voxel_size);
        to_index_space(points, *xf);
        openvdb::tools::QuadAndTriangleDataAdapter<openvdb::Vec3s, openvdb::Vec3I> mesh(points, tris);
        auto grid = openvdb::tools::meshToVolume<openvdb::FloatGrid>(mesh, *xf, float(half_width), float(half_width));
        grid->setName("surface");
        *out = wrap(grid);
        return TS_OK;
    });
}

ts_status tsvdb_mesh_to_dense_sdf(const float *vertices, size_t vertex_count, const int32_t *triangles,
                                  size_t triangle_count, double voxel_size, double exterior_band,
                                  tsvdb_dense *out, ts_error *err)
{
    return guarded(err, "mesh to signed distance", [&] {
        ts_status st = check_voxel(voxel_size, "mesh to signed distance", err);
        std::vector<openvdb::Vec3s> points;
        std::vector<openvdb::Vec3I> tris;
        if (st == TS_OK)
            st = read_mesh(vertices, vertex_count, triangles, triangle_count, points, tris,
                           "mesh to signed distance", err);
        if (st != TS_OK)
            return st;
        auto xf = openvdb::math::Transform::createLinearTransform(voxel_size);
        to_index_space(points, *xf);
        openvdb::tools::QuadAndTriangleDataAdapter<openvdb::Vec3s, openvdb::Vec3I> mesh(points, tris);
        auto grid = openvdb::tools::meshToVolume<openvdb::FloatGrid>(
            mesh, *xf, float(exterior_band), std::numeric_limits<float>::max());
        openvdb::CoordBBox bbox = grid->evalActiveVoxelBoundingBox();
        if (bbox.empty())
            return ts_fail(err, TS_ERR_INVALID, "mesh to signed distance: the mesh produced no voxels "
                                                "(smaller than the voxel size %g?)", voxel_size);
        bbox.expand(1);
        return dense_from_bbox(*grid, bbox, out);
    });
}

// Overlapping spheres leave the whole inside of the liquid active (a sphere's
// centre is never more than a band's width from the surface of the next), so
// later passes would work through the liquid's volume: keep only the voxels
// within half_width voxels of the zero crossing, the rest inactive at
// -background inside and +background outside.
static void narrow_band(openvdb::FloatGrid &grid, double half_width)
{
    auto crossing = openvdb::tools::extractIsosurfaceMask(grid, 0.0f);
    openvdb::BoolTree &band = crossing->tree();
    openvdb::tools::dilateActiveValues(band, int(std::ceil(half_width)), openvdb::tools::NN_FACE_EDGE,
                                       openvdb::tools::IGNORE_TILES);
    grid.tree().topologyIntersection(band);
    openvdb::tools::signedFloodFill(grid.tree());
    openvdb::tools::pruneLevelSet(grid.tree());
}

ts_status tsvdb_particles_to_level_set(const float *x, const float *y, const float *z, const float *radius,
                                       float radius_all, size_t count, double voxel_size, double half_width,
                                       tsvdb_grid **out, ts_error *err)
{
    return guarded(err, "particles to level set", [&] {
        ts_status st = check_voxel(voxel_size, "particles to level set", err);
        if (st != TS_OK)
            return st;
        if (!radius && !(radius_all > 0.0f))
            return ts_fail(err, TS_ERR_INVALID, "particles to level set: radius must be positive (got %g)",
                           double(radius_all));
        auto grid = openvdb::createLevelSet<openvdb::FloatGrid>(voxel_size, half_width);
        grid->setName("surface");
        if (count > 0) {
            openvdb::tools::ParticlesToLevelSet<openvdb::FloatGrid> raster(*grid);
            raster.setRmin(0.5); // keep spheres down to half a voxel rather than dropping them
            sphere_list list{x, y, z, radius, radius_all, count};
            raster.rasterizeSpheres(list);
            raster.finalize(true);
            narrow_band(*grid, half_width);
        }
        *out = wrap(grid);
        return TS_OK;
    });
}

using SurfaceLeaf = openvdb::FloatTree::LeafNodeType;
static_assert(SurfaceLeaf::SIZE == 512, "leaves of 8^3 voxels");
static_assert(sizeof(openvdb::util::NodeMask<3>::Word) == sizeof(uint64_t), "a leaf's mask in 64-bit words");

tsvdb_leaf *tsvdb_leaf_new(const int32_t origin[3])
{
    try {
        return reinterpret_cast<tsvdb_leaf *>(new SurfaceLeaf(openvdb::Coord(origin[0], origin[1], origin[2])));
    } catch (...) {
        return nullptr;
    }
}

float *tsvdb_leaf_values(tsvdb_leaf *leaf) { return reinterpret_cast<SurfaceLeaf *>(leaf)->buffer().data(); }

uint64_t *tsvdb_leaf_active(tsvdb_leaf *leaf)
{
    return &reinterpret_cast<SurfaceLeaf *>(leaf)->getValueMask().template getWord<uint64_t>(0);
}

void tsvdb_leaf_free(tsvdb_leaf *leaf) { delete reinterpret_cast<SurfaceLeaf *>(leaf); }

ts_status tsvdb_level_set_from_leaves(double voxel_size, double half_width, size_t count, tsvdb_leaf **leaves,
                                      tsvdb_grid **out, ts_error *err)
{
    size_t taken = 0; // leaves[0..taken) belong to the grid, or have been freed
    const ts_status st = guarded(err, "level set from leaves", [&] {
        ts_status st = check_voxel(voxel_size, "level set from leaves", err);
        if (st != TS_OK)
            return st;
        auto grid = openvdb::createLevelSet<openvdb::FloatGrid>(voxel_size, half_width);
        grid->setName("surface");
        for (; taken < count; taken++) {
            auto *leaf = reinterpret_cast<SurfaceLeaf *>(leaves[taken]);
            const openvdb::Coord origin = leaf->origin();
            if ((origin.x() & 7) || (origin.y() & 7) || (origin.z() & 7))
                return ts_fail(err, TS_ERR_INVALID, "level set from leaves: leaf %zu is not on the 8-voxel lattice",
                               taken);
            grid->tree().addLeaf(leaf); // the tree owns it now
        }
        // the leaves come with every voxel's sign: only the tiles above them need it (minimum level 1)
        openvdb::tools::signedFloodFill(grid->tree(), true, 1, 1);
        openvdb::tools::pruneLevelSet(grid->tree());
        *out = wrap(grid);
        return TS_OK;
    });
    for (size_t k = taken; k < count; k++)
        tsvdb_leaf_free(leaves[k]);
    return st;
}

ts_status tsvdb_level_set_smooth(tsvdb_grid *g, int iterations, double offset, ts_error *err)
{
    return guarded(err, "smooth level set", [&] {
        if (g->grid->getGridClass() != openvdb::GRID_LEVEL_SET)
            return ts_fail(err, TS_ERR_INVALID, "smooth level set: grid '%s' is not a level set", tsvdb_grid_name(g));
        if (iterations < 0 || iterations > 100 || !std::isfinite(offset))
            return ts_fail(err, TS_ERR_INVALID, "smooth level set: iterations must be 0-100 (got %d)", iterations);
        if (g->grid->activeVoxelCount() == 0)
            return TS_OK;
        // Gaussian passes over the band keep |grad phi| close to 1 near the zero
        // crossing, so adding the offset moves the surface by about that distance
        // (no costly re-distancing; the band is 3 voxels, the offset under one or two).
        openvdb::tools::Filter<openvdb::FloatGrid> filter(*g->grid);
        filter.gaussian(1, iterations);
        if (offset != 0.0) {
            const float shift = float(offset);
            for (auto it = g->grid->tree().beginValueOn(); it; ++it)
                it.setValue(*it + shift);
        }
        return TS_OK;
    });
}

ts_status tsvdb_dense_to_grid(const tsvdb_dense *d, float tolerance, tsvdb_grid **out, ts_error *err)
{
    return guarded(err, "dense to grid", [&] {
        ts_status st = check_voxel(d->voxel_size, "dense to grid", err);
        if (st != TS_OK)
            return st;
        if (d->dims[0] < 1 || d->dims[1] < 1 || d->dims[2] < 1)
            return ts_fail(err, TS_ERR_INVALID, "dense to grid: empty array %dx%dx%d", d->dims[0], d->dims[1],
                           d->dims[2]);
        auto grid = openvdb::FloatGrid::create(0.0f);
        auto xf = openvdb::math::Transform::createLinearTransform(d->voxel_size);
        xf->postTranslate(openvdb::Vec3d(d->origin[0], d->origin[1], d->origin[2]));
        grid->setTransform(xf);
        openvdb::CoordBBox bbox(openvdb::Coord(0, 0, 0),
                                openvdb::Coord(d->dims[0] - 1, d->dims[1] - 1, d->dims[2] - 1));
        openvdb::tools::Dense<float, openvdb::tools::LayoutXYZ> dense(bbox, d->values);
        openvdb::tools::copyFromDense(dense, *grid, tolerance);
        openvdb::tools::prune(grid->tree(), tolerance); // uniform blocks (a terrain's solid inside) become tiles
        grid->setGridClass(openvdb::GRID_FOG_VOLUME);
        grid->setName("density");
        *out = wrap(grid);
        return TS_OK;
    });
}

ts_status tsvdb_grid_to_dense(const tsvdb_grid *g, tsvdb_dense *out, ts_error *err)
{
    return guarded(err, "grid to dense", [&] {
        openvdb::CoordBBox bbox = g->grid->evalActiveVoxelBoundingBox();
        if (bbox.empty())
            return ts_fail(err, TS_ERR_INVALID, "grid to dense: grid '%s' has no active voxels", tsvdb_grid_name(g));
        return dense_from_bbox(*g->grid, bbox, out);
    });
}

ts_status tsvdb_grid_to_mesh(const tsvdb_grid *g, double isovalue, double adaptivity, float **vertices,
                             size_t *vertex_count, int32_t **triangles, size_t *triangle_count, ts_error *err)
{
    return guarded(err, "volume to mesh", [&] {
        std::vector<openvdb::Vec3s> points;
        std::vector<openvdb::Vec3I> tris;
        std::vector<openvdb::Vec4I> quads;
        openvdb::tools::volumeToMesh(*g->grid, points, tris, quads, isovalue, adaptivity);
        size_t nt = tris.size() + 2 * quads.size();
        float *v = static_cast<float *>(std::malloc((points.size() ? points.size() : 1) * 3 * sizeof(float)));
        int32_t *t = static_cast<int32_t *>(std::malloc((nt ? nt : 1) * 3 * sizeof(int32_t)));
        if (!v || !t) {
            std::free(v);
            std::free(t);
            throw std::bad_alloc();
        }
        for (size_t i = 0; i < points.size(); i++)
            for (int k = 0; k < 3; k++)
                v[3 * i + k] = points[i][k];
        // OpenVDB winds its polygons clockwise seen from outside; reverse them
        // so normals point out of the solid as Blender expects.
        size_t o = 0;
        for (const auto &tr : tris) {
            t[o++] = int32_t(tr[2]); t[o++] = int32_t(tr[1]); t[o++] = int32_t(tr[0]);
        }
        for (const auto &q : quads) {
            t[o++] = int32_t(q[2]); t[o++] = int32_t(q[1]); t[o++] = int32_t(q[0]);
            t[o++] = int32_t(q[3]); t[o++] = int32_t(q[2]); t[o++] = int32_t(q[0]);
        }
        *vertices = v;
        *vertex_count = points.size();
        *triangles = t;
        *triangle_count = nt;
        return TS_OK;
    });
}

// OpenVDB stamps every file with a random UUID (36 ASCII characters after the
// header's magic, version numbers and grid-offsets flag). Replace it by one
// made from a hash of everything else, so the same grids give the same bytes -
// a bake is reproducible file for file - and different grids still differ.
static const size_t UUID_AT = 8 + 4 + 4 + 4 + 1, UUID_LEN = 36;

static bool stamp_content_uuid(const std::string &file)
{
    std::FILE *f = std::fopen(file.c_str(), "r+b");
    if (!f)
        return false;
    std::vector<unsigned char> bytes;
    unsigned char buf[65536];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0)
        bytes.insert(bytes.end(), buf, buf + got);
    bool ok = bytes.size() > UUID_AT + UUID_LEN;
    for (size_t i = 0; ok && i < UUID_LEN; i++) {
        char c = char(bytes[UUID_AT + i]);
        ok = (i == 8 || i == 13 || i == 18 || i == 23) ? c == '-' : std::isxdigit((unsigned char)c) != 0;
    }
    if (ok) {
        uint64_t h[2] = {1469598103934665603ull, 1099511628211ull * 7919ull};   // FNV-1a, two streams
        for (size_t i = 0; i < bytes.size(); i++) {
            if (i >= UUID_AT && i < UUID_AT + UUID_LEN)
                continue;
            h[0] = (h[0] ^ bytes[i]) * 1099511628211ull;
            h[1] = (h[1] ^ bytes[i]) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
        }
        char uuid[UUID_LEN + 1];
        std::snprintf(uuid, sizeof uuid, "%08x-%04x-%04x-%04x-%012llx", unsigned(h[0] >> 32),
                      unsigned(h[0] >> 16) & 0xffffu, unsigned(h[0]) & 0xffffu, unsigned(h[1] >> 48),
                      (unsigned long long)(h[1] & 0xffffffffffffull));
        ok = std::fseek(f, long(UUID_AT), SEEK_SET) == 0 && std::fwrite(uuid, 1, UUID_LEN, f) == UUID_LEN;
    }
    return std::fclose(f) == 0 && ok;
}

ts_status tsvdb_write(const char *path, tsvdb_grid *const *grids, size_t count, ts_error *err)
{
    return guarded(err, path, [&] {
        openvdb::GridPtrVec list;
        for (size_t i = 0; i < count; i++)
            list.push_back(grids[i]->grid);
        std::string tmp = std::string(path) + ".tmp-" + std::to_string(long(getpid()));
        {
            openvdb::io::File file(tmp);
            file.write(list);
            file.close();
        }
        if (!stamp_content_uuid(tmp)) {
            std::remove(tmp.c_str());
            return ts_fail(err, TS_ERR_IO, "%s: could not finish writing the .vdb file", path);
        }
        if (std::rename(tmp.c_str(), path) != 0) {
            std::remove(tmp.c_str());
            return ts_fail(err, TS_ERR_IO, "%s: could not rename into place", path);
        }
        return TS_OK;
    });
}

ts_status tsvdb_read(const char *path, tsvdb_grid ***grids, size_t *count, ts_error *err)
{
    *grids = nullptr;
    *count = 0;
    return guarded(err, path, [&] {
        if (access(path, R_OK) != 0)
            return ts_fail(err, TS_ERR_IO, "%s: cannot open the .vdb file", path);
        openvdb::GridPtrVecPtr list;
        try {
            openvdb::io::File file(path);
            /* no delayed loading: every voxel buffer is read (and any damage met) here, inside the
             * try, not later from a memory map where OpenVDB's errors cannot be caught */
            file.open(false);
            list = file.getGrids();
            file.close();
        } catch (const std::exception &e) {
            return ts_fail(err, TS_ERR_CORRUPT, "%s: not a readable .vdb file (%s)", path, e.what());
        }
        std::vector<tsvdb_grid *> out;
        for (auto &base : *list) {
            auto fg = openvdb::gridPtrCast<openvdb::FloatGrid>(base);
            if (fg)
                out.push_back(wrap(fg));
        }
        *grids = static_cast<tsvdb_grid **>(std::malloc((out.size() ? out.size() : 1) * sizeof(tsvdb_grid *)));
        if (!*grids) {
            for (auto *g : out)
                delete g;
            throw std::bad_alloc();
        }
        std::memcpy(*grids, out.data(), out.size() * sizeof(tsvdb_grid *));
        *count = out.size();
        return TS_OK;
    });
}

} // extern "C"
