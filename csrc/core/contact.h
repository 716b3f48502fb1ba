/* contact.h - the spring-dashpot contact law shared by the granular solvers.
 *
 * Cundall & Strack's model as written in the sand paper's appendix A
 * (../shared/papers/sand-dem-spattering-onoue-nishita.txt): a normal spring
 * and dashpot on the overlap d_n, a tangential spring on the integrated
 * sliding d_t (the contact's history) plus a dashpot, the tangential force
 * capped by Coulomb's |F_t| <= mu |F_n| (eq. A-6). Spring and damping come
 * from the pair's effective mass, a contact time t_c and a restitution e_n
 * (eqs ). Sand (element-element, element-object) and fracture
 * (element contacts, projectiles) both call ts_contact_force; none has its
 * own copy. Fracture's element contacts (eqs 4-6 of the fracture paper) have
 * no tangential spring, only a dashpot: ts_contact_force_dashpot.
 *
 * One departure: the paper's c = -m_eff ln(e_n) / t_c is half the
 * damping of a linear oscillator whose rebound speed is e_n times its
 * approach speed; we use c = -2 m_eff ln(e_n) / t_c so that e_n means what
 * it says (tests/c/test_contact.c measures the rebound).
 *
 * A second: the tangential spring and dashpot are 2/7 of the normal ones
 * (k_t = 2/7 k_n, c_t = 2/7 c_n) where eqs make them equal. At
 * a contact between spheres the tangential motion moves 7/2 times less
 * inertia than the normal one (the spheres turn as well as slide: 1/m +
 * r^2/I = 7/2 /m), so with k_t = k_n it rings sqrt(7/2) times faster, and a
 * DE's spin against its twelve neighbours in a packed layer is damped ten
 * times as fast as its contacts: at ten steps per contact time the explicit
 * step amplifies that spin instead of damping it (its factor per step goes
 * past -1), and Coulomb's cap, which grows with the load, stops it only near
 * the surface - deep DEM layers crept and collapsed under their own weight
 * (tests/c/test_sand.c, deep_layer_stays_at_rest). At 2/7 the tangential
 * oscillation has the normal one's period and damping ratio, the usual DEM
 * choice; static friction, which decides how sand piles and bears, is
 * Coulomb's mu either way.
 */
#ifndef TSUBU_CONTACT_H
#define TSUBU_CONTACT_H

#include "vecmath.h"

typedef struct ts_contact_law {
    double contact_time;   /* t_c, seconds: how long a collision lasts */
    double restitution;    /* e_n in (0, 1] */
    double friction;       /* mu of eq. A-6 */
} ts_contact_law;

/* Stiffness k (eq. A-9) and damping c (A-10, see above) for effective mass m_eff. */
void ts_contact_coefficients(const ts_contact_law *law, double m_eff, double *k, double *c);

/* m_eff of eq. A-11; an infinite mass (inv = 0) on one side gives the other's mass. */
static inline double ts_effective_mass(double inv_mass_1, double inv_mass_2)
{
    return 1.0 / (inv_mass_1 + inv_mass_2);
}

/* Relative velocity at the contact point, eq. A-1: of body 2 with respect to
 * body 1, u_n the unit normal from 1 to 2, r1 and r2 the lever arms along it. */
static inline ts_vec3 ts_contact_velocity(ts_vec3 v1, ts_vec3 w1, double r1, ts_vec3 v2, ts_vec3 w2, double r2,
                                          ts_vec3 u_n)
{
    ts_vec3 spin = ts_v3_add(ts_v3_scale(w2, r2), ts_v3_scale(w1, r1));
    return ts_v3_add(ts_v3_sub(v2, v1), ts_v3_cross(u_n, spin));
}

typedef struct ts_contact_result {
    ts_vec3 force;      /* on body 1 from body 2 (eq. A-5) */
    ts_vec3 tangential; /* its tangential part F_t, for the torque r1 u_n x F_t */
    double normal;      /* F_n of eq. A-7 (positive pushing the bodies apart) */
} ts_contact_result;

/* Force on body 1 from body 2 overlapping by d_n > 0 along u_n (from 1 to 2),
 * v_c from ts_contact_velocity, over a step dt. d_t is the contact's
 * tangential displacement (eq. A-4): zero for a new contact, updated in place
 * (rotated into the current tangent plane, integrated, and shortened when the
 * contact slides). Body 2 computing its own side with -u_n and -v_c gets
 * exactly the opposite force. Inline: it runs for every contact of every step. */
#define TS_TANGENTIAL_SHARE (2.0 / 7.0) /* k_t / k_n and c_t / c_n (see above) */

static inline ts_contact_result ts_contact_force(const ts_contact_law *law, double k, double c, double d_n,
                                                 ts_vec3 u_n, ts_vec3 v_c, double dt, ts_vec3 *d_t)
{
    double v_n = ts_v3_dot(v_c, u_n);                        /* eq. A-2; approaching when < 0 */
    ts_vec3 v_t = ts_v3_sub(v_c, ts_v3_scale(u_n, v_n));      /* eq. A-3 */
    /* eq. A-7, d_n' = -v_n. Not clamped at zero: the brief pull of the
     * dashpot as a pair separates is what makes the rebound exactly e_n
     * (tests/c/test_sand.c); pairs at rest have no dashpot force at all. */
    double F_n = k * d_n - c * v_n;

    /* keep the history in the tangent plane as the contact rolls, at its length */
    double len2 = ts_v3_dot(*d_t, *d_t);
    if (len2 > 0.0) {
        ts_vec3 dt_plane = ts_v3_sub(*d_t, ts_v3_scale(u_n, ts_v3_dot(*d_t, u_n)));
        double plane2 = ts_v3_dot(dt_plane, dt_plane);
        *d_t = plane2 > 0.0 ? ts_v3_scale(dt_plane, sqrt(len2 / plane2)) : ts_v3(0, 0, 0);
    }
    *d_t = ts_v3_add(*d_t, ts_v3_scale(v_t, dt));               /* eq. A-4 */

    const double k_t = TS_TANGENTIAL_SHARE * k, c_t = TS_TANGENTIAL_SHARE * c;
    ts_vec3 F_t = ts_v3_add(ts_v3_scale(*d_t, k_t), ts_v3_scale(v_t, c_t)); /* eq. A-8 */
    double F_t2 = ts_v3_dot(F_t, F_t), limit = law->friction * fabs(F_n);
    if (F_t2 > limit * limit) { /* sliding, eq. A-6: the spring holds only what friction allows */
        F_t = ts_v3_scale(F_t, limit / sqrt(F_t2));
        *d_t = ts_v3_scale(ts_v3_sub(F_t, ts_v3_scale(v_t, c_t)), 1.0 / k_t);
    }
    ts_contact_result r;
    r.tangential = F_t;
    r.normal = F_n;
    r.force = ts_v3_add(ts_v3_scale(u_n, -F_n), F_t);         /* eq. A-5 */
    return r;
}

/* Walton & Braun's hysteretic normal spring (1986), its memory fading: a contact loads along k and unloads along
 * `unloading` x k, from the plastic overlap d_0 = d_max (1 - 1 / unloading) on, so a load that comes and goes loses
 * 1 - 1 / unloading of the energy it stored instead of giving it back. A packed bed under a body thousands of times a
 * grain's mass rings as a spring whose dashpots (set for a grain's mass) damp it by a few per cent; this damps it at
 * any mass. As Walton & Braun wrote it, d_0 stays, and a bed shaken under a load compacts ever deeper; here d_0 follows
 * its target d_n (1 - 1 / unloading) at the rate `fade` per step (dt over the memory's time), loading and unloading
 * alike: a contact at rest is the plain spring k d_n whatever it went through (objects rest as deep as without it),
 * while loads that change within the memory lose energy. Returns the overlap the spring acts on (the force is k times
 * it); `plastic` is the contact's history, d_0 (zero for a new contact). unloading <= 1: the plain spring. */
static inline double ts_hysteretic_overlap(double d_n, double unloading, double fade, double *plastic)
{
    if (!(unloading > 1.0))
        return d_n;
    *plastic += (d_n * (1.0 - 1.0 / unloading) - *plastic) * fade;
    const double steep = unloading * (d_n - *plastic);
    return steep < d_n ? (steep > 0.0 ? steep : 0.0) : d_n;
}

/* Rolling resistance, the elastic-plastic spring of LIGGGHTS' EPSD2 (Ai, Chen, Rotter & Ooi 2011, its
 * model C without the dashpot): a torque M_r that grows with the relative rolling of the pair, dM_r =
 * k_r w_t dt (w_t: the part of w_rel = w_1 - w_2 in the tangent plane, twisting left out), capped at
 * |M_r| <= limit = mu_r R_eff |F_n|; the spring k_r = k_t R_eff^2. Equal spheres of any friction roll over
 * one another freely: without it a packing flows under a load like a liquid (an object set on the bed
 * sinks until the DEM layer's floor holds it) and a heap has no angle of repose. m_r is the contact's
 * history (zero for a new contact), kept in the tangent plane as the contact turns, at its length, like
 * d_t. Returns the torque on body 1; body 2 computing its side with -u_n and -w_rel gets the opposite. */
static inline ts_vec3 ts_rolling_torque(double k_r, double limit, ts_vec3 u_n, ts_vec3 w_rel, double dt, ts_vec3 *m_r)
{
    ts_vec3 w_t = ts_v3_sub(w_rel, ts_v3_scale(u_n, ts_v3_dot(w_rel, u_n)));
    double len2 = ts_v3_dot(*m_r, *m_r);
    if (len2 > 0.0) {
        ts_vec3 plane = ts_v3_sub(*m_r, ts_v3_scale(u_n, ts_v3_dot(*m_r, u_n)));
        double plane2 = ts_v3_dot(plane, plane);
        *m_r = plane2 > 0.0 ? ts_v3_scale(plane, sqrt(len2 / plane2)) : ts_v3(0, 0, 0);
    }
    *m_r = ts_v3_add(*m_r, ts_v3_scale(w_t, k_r * dt));
    double m2 = ts_v3_dot(*m_r, *m_r);
    if (m2 > limit * limit)   /* rolling on: the spring holds only the limit */
        *m_r = limit > 0.0 ? ts_v3_scale(*m_r, limit / sqrt(m2)) : ts_v3(0, 0, 0);
    return ts_v3_scale(*m_r, -1.0);
}

/* Eqs 4-6 of the fracture paper: normal spring-dashpot, tangential dashpot
 * F_t = -c v_t, capped by Coulomb's mu |F_n| like eq. A-6. No history. */
ts_contact_result ts_contact_force_dashpot(const ts_contact_law *law, double k, double c, double d_n, ts_vec3 u_n,
                                           ts_vec3 v_c);

#endif
