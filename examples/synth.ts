// The cdk8s app of `npx cdk8s synth` (see cdk8s.yaml): writes the example preview to cdk8s.out/.
import { App } from 'cdk8s';
import { exampleChart } from './example-preview.js';

const app = new App();
exampleChart(app);
app.synth();
