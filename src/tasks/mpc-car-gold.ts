/**
 * Gold parameter dictionaries per track and behaviour, found by scripts/tune-car.ts (do not edit by hand; rerun
 * the script after any change to the simulator, and bump SIM_VERSION). `metric` is the tuned run's RMSE and
 * `baseline` the default parameters' RMSE, both from simulator version car-sim-1.
 */
import type { MpcParams } from "../rewards/car/index.js";

/** Tuned result of one behaviour. */
export interface TunedCase {
  params: Partial<MpcParams>;
  metric: number;
  baseline: number;
}

/** Simulator version the numbers below come from. */
export const GOLD_SIM_VERSION = "car-sim-1";

/** Gold per track, then per behaviour ("refVelocity(3)" is the template for every refVelocity speed). */
export const CAR_GOLD: Record<"circle" | "F", Record<string, TunedCase>> = {
  circle: {
    racingLine: {
      params: {
        qn: 100,
        qalpha: 2.5,
        qddelta: 0.025,
        qv: 20,
      },
      metric: 0.01736024033534617,
      baseline: 0.036846925919930815,
    },
    centerline: {
      params: {
        qn: 0.25,
        track_safety_margin: 1,
        qalpha: 28,
        qddelta: 0.1,
      },
      metric: 0.035067992190489894,
      baseline: 0.763153060012491,
    },
    reverse: {
      params: {
        qv: 0,
        v_min: -1,
        v_max: -1,
        qalpha: 1.75,
        qn: 80,
        qddelta: 0.025,
        qac: 0.04,
      },
      metric: 0.00001963759254111193,
      baseline: 6.546568083495675,
    },
    "refVelocity(3)": {
      params: {
        qv: 0,
        v_min: 3,
        v_max: 3,
        qalpha: 1.75,
        qn: 80,
        qddelta: 0.025,
        qac: 0.003,
      },
      metric: 0.001496415768746592,
      baseline: 2.546568089181594,
    },
    smooth: {
      params: {
        alat_max: 4,
        a_min: -2,
        a_max: 4,
        qac: 1,
        v_min: 1,
        v_max: 1.5,
        qddelta: 0.4,
      },
      metric: 0.4325720607115705,
      baseline: 5.958165967414909,
    },
  },
  F: {
    racingLine: {
      params: {
        qn: 100,
        qalpha: 2.5,
        qddelta: 0.025,
        qv: 20,
      },
      metric: 0.009514560023708216,
      baseline: 0.01982276563265373,
    },
    centerline: {
      params: {
        qn: 0.25,
        track_safety_margin: 1,
        qalpha: 14,
        qddelta: 0.025,
      },
      metric: 0.07861726051397994,
      baseline: 0.4175814420688147,
    },
    reverse: {
      params: {
        qv: 0,
        v_min: -1,
        v_max: -1,
        qalpha: 28,
        qn: 80,
        qddelta: 0.025,
        qac: 0.04,
      },
      metric: 0.000032720059719413786,
      baseline: 5.666195942164674,
    },
    "refVelocity(3)": {
      params: {
        qv: 0,
        v_min: 3,
        v_max: 3,
        qn: 80,
        qddelta: 0.025,
        qac: 0.003,
        qalpha: 3.5,
      },
      metric: 0.005051470555344885,
      baseline: 1.9420216209358363,
    },
    smooth: {
      params: {
        alat_max: 2,
        a_min: -2,
        a_max: 0.5,
        qac: 1,
        v_min: 1,
        v_max: 1.5,
        qddelta: 0.4,
      },
      metric: 0.7917597753700434,
      baseline: 4.753992987123073,
    },
  },
};
